"""The application's state, typed: what the lifespan makes once per process (architecture
review 2026-12-03, change 4).

``AppState`` is everything a route, a UI page, a stream, the fast path or a service needs
from the process: the Temporal client, the database, the settings, the read model, the
pre-play watches, the shared views and the stream slots. The lifespan (``api/app.py``) makes
one and hangs it on the app; ``state_of(app)`` reads it back typed, and ``AppStateDep`` is the
FastAPI dependency for it (the full-stack-fastapi-template's ``SessionDep`` idea), so no
signature takes ``app: Any`` and nothing reads ``app.state.<name>`` by a string of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends
from limits.aio.strategies import MovingWindowRateLimiter
from starlette.applications import Starlette
from starlette.requests import HTTPConnection
from temporalio.client import Client

from api.preplay import PrePlayRows
from api.read_model import GameStateCache
from api.readcache import SingleFlight
from api.streams import StreamSlots
from core.codec import EncryptionCodec
from core.settings import Settings
from db.engine import Database
from wire.messages import TournamentView


@dataclass(slots=True)
class AppState:
    """One process's clients and caches (made in the lifespan, closed with it)."""

    settings: Settings
    temporal: Client
    db: Database
    read_model: GameStateCache
    """Every watched table's newest published state (api/read_model.py)."""
    pre_play: PrePlayRows
    """Long-polls on tournaments that have no table yet (api/preplay.py)."""
    tournament_views: SingleFlight[str, TournamentView]
    """``GET /tournaments/{id}``'s shared record per tournament (api/readcache.py)."""
    metrics_snapshots: SingleFlight[str, Any]
    """``/metrics``' shared snapshot (api/routes/metrics.py)."""
    stream_slots: StreamSlots
    """The caps on open streams (api/streams.py)."""
    login_limiter: MovingWindowRateLimiter
    """``/ui/login``'s attempts (security review L6)."""
    display_codec: EncryptionCodec | None = None
    """The codec the Temporal UI's codec endpoint decodes with, made at its first use."""


def state_of(app: Starlette) -> AppState:
    """The app's state (``app`` is the FastAPI app, or what an ASGI scope calls ``app``)."""
    state: AppState = app.state.app
    return state


async def _app_state(connection: HTTPConnection) -> AppState:
    # async: FastAPI runs a plain ``def`` dependency in its thread pool (api/deps.py).
    return state_of(connection.app)


AppStateDep = Annotated[AppState, Depends(_app_state)]
"""The app's state for a route, a page or a WebSocket handler."""
