"""Inputs, outputs and views of the workflows' handlers: one model each, shared with the API.

Inside Python the fields are snake_case; on the wire (the API's JSON) they are the seed
system's camelCase, via the alias generator.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=False)


class TournamentPhase(StrEnum):
    REGISTERING = "registering"
    STARTING = "starting"
    PLAYING = "playing"
    ENDED = "ended"
    SETTLING = "settling"
    CLOSED = "closed"
    CANCELLED = "cancelled"


class EntrantStatus(StrEnum):
    RESERVED = "reserved"
    PAID = "paid"
    RELEASED = "released"


class CreateTournamentInput(WireModel):
    tournament_id: str
    name: str
    settings: dict[str, Any]
    """The settings as sent on the wire; the workflow validates them with the domain."""


class RegisterInput(WireModel):
    player_id: str
    owner_user_id: str
    is_agent: bool = False
    advisor_agent_id: str | None = None


class RegisterResult(WireModel):
    ok: bool = True
    status: EntrantStatus
    owner_user_id: str
    reserved_until_ms: int | None = None
    version: int


class EntrantView(WireModel):
    player_id: str
    owner_user_id: str
    is_agent: bool
    status: EntrantStatus
    seat: int | None = None
    reserved_until_ms: int | None = None


class TournamentView(WireModel):
    tournament_id: str
    name: str
    state: TournamentPhase
    kind: str
    seats: int
    entry_fee: int
    starting_stack: int
    registered_count: int
    entrants: list[EntrantView]
    version: int


class TournamentRow(WireModel):
    """What the persistence activity upserts into ``tournaments`` (the read model)."""

    tournament_id: str
    name: str
    kind: str
    seats: int
    entry_fee: int
    rake_fee: int
    starting_stack: int
    settings: dict[str, Any]
    state: TournamentPhase
    workflow_id: str
    registered_count: int
    current_level: int = 0


class EntrantRow(WireModel):
    tournament_id: str
    player_id: str
    owner_user_id: str
    is_agent: bool
    advisor_agent_id: str | None
    status: EntrantStatus
    seat: int | None = None
