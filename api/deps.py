"""Shared clients as typed dependencies: fields of the app's state (``api/state.py``, made once
per process in the lifespan).

Every dependency is ``async def``, even one that only reads ``app.state``: FastAPI runs a plain
``def`` dependency in its thread pool, a thread hop per request for nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Path, Query
from temporalio.client import Client

from api.readcache import SingleFlight
from api.state import AppStateDep
from core.settings import Settings
from db.engine import Database
from wire.messages import TournamentView


async def _client(state: AppStateDep) -> Client:
    return state.temporal


async def _db(state: AppStateDep) -> Database:
    return state.db


async def _settings(state: AppStateDep) -> Settings:
    return state.settings


async def _tournament_views(state: AppStateDep) -> SingleFlight[str, TournamentView]:
    return state.tournament_views


TemporalDep = Annotated[Client, Depends(_client)]
TournamentViewsDep = Annotated[SingleFlight[str, TournamentView], Depends(_tournament_views)]
"""``GET /tournaments/{id}``'s shared view per tournament (api/readcache.py)."""
DbDep = Annotated[Database, Depends(_db)]
SettingsDep = Annotated[Settings, Depends(_settings)]
"""Each one field of the app's state (``api.state.AppStateDep``), for a route that needs no
more than that."""


ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
"""Tournament, room and table ids in paths and bodies (what the service mints, and room
``room_...`` ids): anything else is a coded 422 before a lookup (security review L)."""
VALID_ID = re.compile(ID_PATTERN)
"""``ID_PATTERN`` for an id that no path parameter checked (a WebSocket's)."""

TournamentId = Annotated[str, Path(pattern=ID_PATTERN, max_length=64)]
"""A tournament id in a path: a coded 422 when it cannot be one."""
RoomId = Annotated[str, Path(pattern=ID_PATTERN, max_length=64)]
"""A room id in a path, likewise."""

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=ID_PATTERN,
        description=(
            "Optional: a retry with the same key (and the same action and amount) returns the"
            " first answer; the same key with another action for that turn is 409"
            " idempotency_key_reused. Without one, a retry of the same hand, turn, action and"
            " amount returns the first answer."
        ),
    ),
]
"""An action's ``Idempotency-Key`` (a tournament's act and a room's action alike)."""

NAME_PATTERN = r"^[^\x00-\x1f\x7f]+$"
"""Display names: no control characters (PostgreSQL text cannot even store NUL)."""


MAX_HAND = 2**31 - 1  # the hands table's hand_no is a PostgreSQL integer
HandNumber = Annotated[int, Path(ge=1, le=MAX_HAND)]
"""A finished hand's number in a path (tournaments and rooms alike)."""
AfterHand = Annotated[
    int,
    Query(
        ge=0,
        le=MAX_HAND,
        description="The cursor: the last hand number read (0 for the first page); the "
        "answer's Link rel=next carries the next one.",
    ),
]
"""A hand listing's cursor: the hands after this number (issue 28: the ``Link`` rel="next"
of a page names the next one)."""
PageLimit = Annotated[int, Query(ge=1, le=500)]
"""How many rows a listing answers at most."""


@dataclass(frozen=True, slots=True)
class HandPage:
    """One page of a table's finished hands: those after ``after``, at most ``limit``."""

    after: int
    limit: int


def _hand_page(after: AfterHand = 0, limit: PageLimit = 100) -> HandPage:
    return HandPage(after=after, limit=limit)


HandPageDep = Annotated[HandPage, Depends(_hand_page)]
