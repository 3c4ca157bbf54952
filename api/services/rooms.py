"""Cash rooms: their records, starting and closing one, listing and reading them, joining
and leaving. A room is a RoomWorkflow (``room-<hex>``, workflows/room.py); listing and reading
serve the read model (``rooms``) and never query a workflow. The routes
(api/routes/rooms.py) and the admin pages (api/ui/rooms.py) both call these."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError

from api.auth import Caller
from api.deps import NAME_PATTERN
from api.errors import ApiError
from api.presence import observers, touch
from api.state import AppState
from api.updates import execute_update
from db import advice, agents
from db.agents import card_keys
from db.engine import Database
from db.models import Room
from domain.errors import ErrorCode
from domain.registration import verify_advisor
from domain.rooms import MAX_ENTRY, MAX_NAME, MAX_SEATS, MIN_SEATS, validate_room
from domain.settings import TableKind
from wire.ids import room_workflow_id
from wire.messages import WireModel
from wire.table_messages import (
    CloseRoomInput,
    CloseRoomResult,
    JoinInput,
    JoinResult,
    LeaveInput,
    RoomLeaveResult,
    RoomSpec,
    RoomState,
)
from workflows.room import RoomWorkflow

Status = Literal["waiting", "playing", "paused", "closed"]
"""A room's status, as ``GET /rooms?status=`` filters by it."""


# -- records ---------------------------------------------------------------------------------
# The body's bounds are the domain's (domain/rooms.py), which checks them again with the rest
# of a room's rules (validate_room): one owner, and the schema says the same.
class Entry(WireModel):
    amount: int = Field(ge=1, le=MAX_ENTRY, strict=True)
    currency: Literal["virtual_chips"] = "virtual_chips"


class RoomStakes(WireModel):
    """A room's fixed blinds. Its own name: ``wire.game_state.Stakes`` (with ``ante``) is the
    game state's, and two schemas of one name make generated clients drop both."""

    small_blind: int = Field(ge=1, le=MAX_ENTRY)
    big_blind: int = Field(ge=1, le=MAX_ENTRY)


class CreateRoomBody(WireModel):
    name: str = Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    entry: Entry
    stakes: RoomStakes
    seats: int = Field(ge=MIN_SEATS, le=MAX_SEATS)
    speed: Literal["turbo", "normal", "slow"] = "normal"
    hand_pause_ms: int = Field(default=2000, ge=0, le=60_000)
    """The pause between hands so players can read the result."""
    kind: TableKind = TableKind.OPEN
    """Who may sit: ``open`` (anyone), ``human_only``, ``agent`` (agents only) or ``copilot``
    (humans); the tournaments' audiences and their refusals."""


class RoomPlayer(WireModel):
    seat: int
    """1 .. the room's ``seats``."""
    handle: str
    """``@`` and the player's id (a user id, or an agent id)."""
    crypto_id: str | None
    """The public key on the player's Agent Card (what its hole cards are sealed to); null for
    a human, or an agent with no key on its card."""
    stack: int
    status: str


class Timeouts(WireModel):
    decision: int
    disconnect_grace: int


class RoomRecord(WireModel):
    room_id: str
    game: str = "texas-holdem"
    variant: str = "no-limit"
    name: str
    entry: Entry
    stakes: RoomStakes
    seats: int
    players: list[RoomPlayer]
    observer_count: int
    speed: str
    timeouts: Timeouts
    hand_number: int
    status: str
    kind: TableKind
    """Who may sit (``CreateRoomBody.kind``)."""
    created_at: datetime


def wire_seat(seat: int) -> int:
    """A table's seat index (0-based, as the workflow and the game state keep it) as the room
    record and the room stream number it: from 1 (seed 004)."""
    return seat + 1


def room_players(stored: list[dict[str, Any]], cards: dict[str, str]) -> list[RoomPlayer]:
    """The record's ``players`` from the read model's (seat index, handle = player id): the
    seat from 1, the handle with its ``@``, the Agent Card's key as ``cryptoId``."""
    out = []
    for p in stored:
        player_id = str(p["handle"])  # the workflow writes the bare id
        out.append(
            RoomPlayer(
                seat=wire_seat(int(p["seat"])),
                handle=f"@{player_id}",
                crypto_id=cards.get(player_id),
                stack=p["stack"],
                status=p["status"],
            )
        )
    return out


async def records(db: Database, rows: list[Room]) -> list[RoomRecord]:
    """Rooms as the API serves them: one read for the observers, one for the Agent Cards."""
    counts = await observers(db, [r.id for r in rows])
    cards = await card_keys(db, [str(p["handle"]) for r in rows for p in r.players])
    return [record(r, counts.get(r.id, 0), cards) for r in rows]


def record(row: Room, observers: int, cards: dict[str, str]) -> RoomRecord:
    return RoomRecord(
        room_id=row.id,
        name=row.name,
        entry=Entry(amount=row.entry),
        stakes=RoomStakes(small_blind=row.small_blind, big_blind=row.big_blind),
        seats=row.seats,
        players=room_players(row.players, cards),
        observer_count=observers,
        speed=row.speed,
        timeouts=Timeouts(decision=row.decision_timeout, disconnect_grace=row.disconnect_grace),
        hand_number=row.hand_number,
        status=row.status,
        kind=TableKind(row.kind),
        created_at=row.created_at,
    )


async def room_row(db: Database, room_id: str) -> Room:
    async with db.session() as session:
        row = await session.get(Room, room_id)
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "no such room")
    return row


# -- start, list, read, close ------------------------------------------------------------------
async def start(state: AppState, body: CreateRoomBody) -> Room:
    """Start a room's workflow and write its first record: ``POST /rooms`` and the admin
    pages' form share it."""
    temporal, db, settings = state.temporal, state.db, state.settings
    rules = validate_room(body.model_dump(by_alias=True))
    room_id = f"room_{secrets.token_hex(16)}"  # 128 bits, never reused (security review L11)
    workflow_id = room_workflow_id(room_id)
    now = datetime.now(UTC)
    now_ms = int(now.timestamp() * 1000)
    row = Room(
        id=room_id,
        name=rules.name,
        seats=rules.seats,
        entry=rules.entry,
        small_blind=rules.small_blind,
        big_blind=rules.big_blind,
        speed=rules.speed.value,
        decision_timeout=rules.decision_timeout,
        disconnect_grace=rules.disconnect_grace,
        status="waiting",
        kind=rules.kind.value,
        hand_number=0,
        players=[],
        workflow_id=workflow_id,
        created_at=now,
        updated_at=now,
    )
    async with db.session() as session:
        # The workflow upserts the same row as it changes; whichever comes first wins here.
        await session.exec(
            insert(Room).values(**row.model_dump()).on_conflict_do_nothing(index_elements=["id"])
        )
        await session.commit()
    await temporal.start_workflow(
        RoomWorkflow.run,
        RoomState(
            table_id=workflow_id,
            seat_count=rules.seats,
            seats=[],
            hand_pause_ms=body.hand_pause_ms,
            room=RoomSpec(
                room_id=room_id,
                name=rules.name,
                entry=rules.entry,
                small_blind=rules.small_blind,
                big_blind=rules.big_blind,
                speed=rules.speed.value,
                decision_timeout=rules.decision_timeout,
                disconnect_grace=rules.disconnect_grace,
                created_ms=now_ms,
                idle_since_ms=now_ms,
                kind=rules.kind.value,
            ),
        ),
        id=workflow_id,
        task_queue=settings.temporal_task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        static_summary=(
            f"room {rules.name}: {rules.seats} seats, {rules.small_blind}/{rules.big_blind},"
            f" entry {rules.entry}"
        ),
    )
    return row


async def list_rooms(db: Database, status: Status | None, limit: int) -> list[RoomRecord]:
    """Rooms, newest first (closed ones only when asked for by ``status``)."""
    query = select(Room).order_by(col(Room.created_at).desc()).limit(limit)
    query = query.where(Room.status == status) if status else query.where(Room.status != "closed")
    async with db.session() as session:
        rows = list(await session.exec(query))
    return await records(db, rows)


async def get(db: Database, room_id: str) -> RoomRecord:
    """One room's record, or ``404 not_found``."""
    return (await records(db, [await room_row(db, room_id)]))[0]


async def close(state: AppState, room_id: str) -> CloseRoomResult:
    """Close a room (operators): the running hand finishes, then every stack goes home."""
    row = await room_row(state.db, room_id)
    if row.status == "closed":
        return CloseRoomResult(status="closed")
    return await execute_update(
        _handle(state.temporal, room_id),
        RoomWorkflow.close,
        CloseRoomInput(reason="admin"),
        closed_code=ErrorCode.ROOM_CLOSED,
        noun="room",
    )


def _handle(temporal: Client, room_id: str) -> WorkflowHandle[Any, Any]:
    return temporal.get_workflow_handle_for(RoomWorkflow.run, room_workflow_id(room_id))


# -- seats -------------------------------------------------------------------------------------
class JoinBody(WireModel):
    seat: int | None = Field(default=None, ge=1, le=MAX_SEATS)
    """A particular free seat, 1 .. the room's ``seats``; the lowest free one when absent."""
    advisor_agent_id: str | None = Field(default=None, min_length=1, max_length=100)
    """A ``copilot`` room: your CoPilot advisor agent (your own, skill ``poker:sng``;
    docs/copilot.md). Required there, refused elsewhere."""


async def _room_advisor(
    db: Database, room: Room, caller: Caller, body: JoinBody | None
) -> str | None:
    """The advisor a join names, checked as a tournament registration's (seed: bindAdvisor):
    ``advisor_required`` / ``advisor_on_non_copilot_kind``. An agent at a copilot room is left
    to the room's audience gate (``agent_not_allowed_at_human_table``), as at a tournament. A
    person holds one seat per room and the advisor must be their own, so it cannot advise
    another player at this table."""
    named = body.advisor_agent_id if body is not None else None
    if caller.is_agent and room.kind == TableKind.COPILOT.value:
        return None
    advisor = await agents.by_id(db, named) if named is not None else None
    verify_advisor(
        room.kind,
        named,
        advisor_owner_user_id=advisor.owner_user_id if advisor else None,
        advisor_skills=frozenset(advisor.skills) if advisor else frozenset(),
        registrant_user_id=caller.owner,
        venue="room",
    )
    return named


async def join(state: AppState, room_id: str, caller: Caller, body: JoinBody | None) -> JoinResult:
    """Take a seat: the room's fixed entry is reserved from the caller's balance and becomes
    their stack; joining again answers the same seat. The seat is numbered from 1."""
    db = state.db
    room = await room_row(db, room_id)
    advisor = await _room_advisor(db, room, caller, body)
    try:
        result = await execute_update(
            _handle(state.temporal, room_id),
            RoomWorkflow.join,
            JoinInput(
                player_id=caller.user_id,
                owner_user_id=caller.owner,
                seat=body.seat - 1 if body and body.seat is not None else None,
                is_agent=caller.is_agent,
            ),
            closed_code=ErrorCode.ROOM_CLOSED,
            noun="room",
        )
    except WorkflowUpdateFailedError as err:
        held = _refusal(err, ErrorCode.ALREADY_SEATED)
        if held is None:
            raise
        result = JoinResult(seat=held["seat"], stack=held["stack"], already_seated=True)
    if advisor is not None:  # the room took the join: its advisor is bound from now on
        await advice.bind_room_advisor(db, room_id, caller.user_id, advisor)
    await touch(db, room_id, caller.user_id, seated=True)
    return result.model_copy(update={"seat": wire_seat(result.seat)})


def _refusal(err: WorkflowUpdateFailedError, code: ErrorCode) -> dict[str, Any] | None:
    """The details of a validator's refusal with this code (a no-op answered as success)."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type == code.value:
        details = list(cause.details or [])
        return details[0] if details and isinstance(details[0], dict) else {}
    return None


async def leave(state: AppState, room_id: str, player_id: str) -> RoomLeaveResult | JSONResponse:
    """Stand up: the remaining stack returns to the player's balance; during a hand they are
    in, 202 with ``pending`` (they leave when it ends)."""
    await room_row(state.db, room_id)
    try:
        result = await execute_update(
            _handle(state.temporal, room_id),
            RoomWorkflow.leave,
            LeaveInput(player_id=player_id),
            closed_code=ErrorCode.ROOM_CLOSED,
            noun="room",
        )
    except WorkflowUpdateFailedError as err:
        if _refusal(err, ErrorCode.LEAVE_PENDING) is None:
            raise
        result = RoomLeaveResult(returned=None, pending=True)
    if result.pending:
        return JSONResponse(result.model_dump(by_alias=True), status_code=202)
    return result
