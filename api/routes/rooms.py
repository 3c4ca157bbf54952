"""Cash rooms: the room records, joining and leaving, playing, hands, and the room stream.

A room is a TableWorkflow with no tournament (``room-<hex>``, workflows/room.py). Listing and
reading rooms serve the read model (``rooms``) and never query a workflow; the game state is
the tournaments' shape without the tournament fields, served from the same query cache.
Anyone may watch: without a credential the game state is the spectator's (no hole cards).
Each authenticated poll or action also records presence, which the room reads for the
disconnect grace, and each anonymous poll or open stream counts as an observer.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, status
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from temporalio.client import Client, WorkflowHandle

from api.auth import CurrentPlayer, MaybePlayer, ServiceKey
from api.deps import NAME_PATTERN, DbDep, SettingsDep, TemporalDep
from api.errors import ApiError
from api.gamestate import GameStateCache, game_state
from api.routes.events import AfterQuery, EventPage, page, resume_point, sse
from api.routes.play import ActBody
from api.updates import execute_update
from db.engine import Database
from db.models import Hand, Room, RoomPresence
from domain.errors import ErrorCode
from domain.rooms import CURRENCY, validate_room
from sng.settings import Settings
from workflows.messages import WireModel
from workflows.table import TableWorkflow
from workflows.table_messages import (
    ActInput,
    ActResult,
    CloseRoomInput,
    CloseRoomResult,
    JoinInput,
    JoinResult,
    LeaveInput,
    LeaveResult,
    RoomSpec,
    SitInInput,
    TableState,
)

router = APIRouter(prefix="/rooms", tags=["rooms"])

OBSERVER_WINDOW = timedelta(seconds=30)
"""Someone who looked at a room within this long is watching it (``observerCount``)."""
TOUCH_SECONDS = 2.0
"""Presence is written at most this often per viewer (the rest are served from memory)."""
MAX_HAND = 2**31 - 1
RoomId = Annotated[str, Path(max_length=64)]


def room_workflow_id(room_id: str) -> str:
    return f"room-{room_id.removeprefix('room_')}"


# -- records ---------------------------------------------------------------------------------
class Entry(WireModel):
    amount: int = Field(ge=1, le=10**12)
    currency: Literal["virtual_chips"] = "virtual_chips"


class Stakes(WireModel):
    small_blind: int = Field(ge=1, le=10**12)
    big_blind: int = Field(ge=1, le=10**12)


class CreateRoomBody(WireModel):
    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    entry: Entry
    stakes: Stakes
    seats: int = Field(ge=2, le=9)
    speed: Literal["turbo", "normal", "slow"] = "normal"
    hand_pause_ms: int = Field(default=2000, ge=0, le=60_000)
    """The pause between hands so players can read the result."""


class RoomPlayer(WireModel):
    seat: int
    handle: str
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
    stakes: Stakes
    seats: int
    players: list[RoomPlayer]
    observer_count: int
    speed: str
    timeouts: Timeouts
    hand_number: int
    status: str
    created_at: datetime


def _record(row: Room, observers: int) -> RoomRecord:
    return RoomRecord(
        room_id=row.id,
        name=row.name,
        entry=Entry(amount=row.entry),
        stakes=Stakes(small_blind=row.small_blind, big_blind=row.big_blind),
        seats=row.seats,
        players=[RoomPlayer(**p) for p in row.players],
        observer_count=observers,
        speed=row.speed,
        timeouts=Timeouts(decision=row.decision_timeout, disconnect_grace=row.disconnect_grace),
        hand_number=row.hand_number,
        status=row.status,
        created_at=row.created_at,
    )


async def _row(db: Database, room_id: str) -> Room:
    async with db.session() as session:
        row = await session.get(Room, room_id)
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "no such room")
    return row


async def _observers(db: Database, room_ids: list[str]) -> dict[str, int]:
    if not room_ids:
        return {}
    since = datetime.now(UTC) - OBSERVER_WINDOW
    async with db.session() as session:
        rows = await session.exec(
            select(RoomPresence.room_id, func.count())
            .where(
                col(RoomPresence.room_id).in_(room_ids),
                col(RoomPresence.seated).is_(False),
                col(RoomPresence.last_seen) > since,
            )
            .group_by(col(RoomPresence.room_id))
        )
        return {room_id: int(n) for room_id, n in rows}


_touched: dict[tuple[str, str], float] = {}


async def touch(db: Database, room_id: str, viewer: str, *, seated: bool) -> None:
    """Record that ``viewer`` is looking at the room now (throttled per viewer)."""
    now = time.monotonic()
    if now - _touched.get((room_id, viewer), 0.0) < TOUCH_SECONDS:
        return
    _touched[(room_id, viewer)] = now
    if len(_touched) > 100_000:  # forget the oldest half rather than grow without bound
        for key in sorted(_touched, key=_touched.__getitem__)[: len(_touched) // 2]:
            del _touched[key]
    stmt = insert(RoomPresence).values(
        room_id=room_id, viewer=viewer, seated=seated, last_seen=func.now()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["room_id", "viewer"], set_={"seated": seated, "last_seen": func.now()}
    )
    async with db.session() as session:
        await session.exec(stmt)
        await session.commit()


def _anonymous(request: Request) -> str:
    client = request.client.host if request.client else "?"
    agent = request.headers.get("user-agent", "")
    return "anon:" + hashlib.sha256(f"{client}|{agent}".encode()).hexdigest()[:24]


# -- create, list, read, close ---------------------------------------------------------------
@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=RoomRecord,
    response_model_by_alias=True,
    dependencies=[ServiceKey],
)
async def create_room(
    body: CreateRoomBody, temporal: TemporalDep, db: DbDep, settings: SettingsDep
) -> RoomRecord:
    """Open a room (operators: ``X-Service-Key``). It waits for two players, then deals."""
    return _record(await start_room(temporal, db, settings, body), 0)


async def start_room(
    temporal: Client, db: Database, settings: Settings, body: CreateRoomBody
) -> Room:
    """Start a room's workflow and write its first record: this route and the admin pages'
    form share it."""
    rules = validate_room(body.model_dump(by_alias=True))
    room_id = f"room_{secrets.token_hex(5)}"
    workflow_id = room_workflow_id(room_id)
    now = datetime.now(UTC)
    now_ms = int(now.timestamp() * 1000)
    row = Room(
        id=room_id, name=rules.name, seats=rules.seats, entry=rules.entry,
        small_blind=rules.small_blind, big_blind=rules.big_blind, speed=rules.speed.value,
        decision_timeout=rules.decision_timeout, disconnect_grace=rules.disconnect_grace,
        status="waiting", hand_number=0, players=[], workflow_id=workflow_id,
        created_at=now, updated_at=now,
    )  # fmt: skip
    async with db.session() as session:
        # The workflow upserts the same row as it changes; whichever comes first wins here.
        await session.exec(
            insert(Room).values(**row.model_dump()).on_conflict_do_nothing(index_elements=["id"])
        )
        await session.commit()
    await temporal.start_workflow(
        TableWorkflow.run,
        TableState(
            table_id=workflow_id, tournament_id=None, parent_workflow_id=None,
            seat_count=rules.seats, settings={}, play_start_ms=now_ms, seats=[],
            hand_pause_ms=body.hand_pause_ms,
            room=RoomSpec(
                room_id=room_id, name=rules.name, entry=rules.entry,
                small_blind=rules.small_blind, big_blind=rules.big_blind,
                speed=rules.speed.value, decision_timeout=rules.decision_timeout,
                disconnect_grace=rules.disconnect_grace, created_ms=now_ms,
                idle_since_ms=now_ms,
            ),
        ),
        id=workflow_id,
        task_queue=settings.temporal_task_queue,
        static_summary=(
            f"room {rules.name}: {rules.seats} seats, {rules.small_blind}/{rules.big_blind},"
            f" entry {rules.entry}"
        ),
    )  # fmt: skip
    return row


@router.get("", response_model=list[RoomRecord], response_model_by_alias=True)
async def list_rooms(
    db: DbDep,
    status_: Annotated[
        Literal["waiting", "playing", "paused", "closed"] | None, Query(alias="status")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[RoomRecord]:
    """Rooms, newest first (closed ones only when asked for by ``status``)."""
    query = select(Room).order_by(col(Room.created_at).desc()).limit(limit)
    query = query.where(Room.status == status_) if status_ else query.where(Room.status != "closed")
    async with db.session() as session:
        rows = list(await session.exec(query))
    observers = await _observers(db, [r.id for r in rows])
    return [_record(r, observers.get(r.id, 0)) for r in rows]


@router.get("/{room_id}", response_model=RoomRecord, response_model_by_alias=True)
async def get_room(room_id: RoomId, db: DbDep) -> RoomRecord:
    row = await _row(db, room_id)
    return _record(row, (await _observers(db, [room_id])).get(room_id, 0))


@router.post(
    "/{room_id}/close",
    response_model=CloseRoomResult,
    response_model_by_alias=True,
    dependencies=[ServiceKey],
)
async def close_room(room_id: RoomId, db: DbDep, temporal: TemporalDep) -> CloseRoomResult:
    """Close a room (operators): the running hand finishes, then every stack goes home."""
    row = await _row(db, room_id)
    if row.status == "closed":
        return CloseRoomResult(status="closed")
    return await execute_update(
        _handle(temporal, room_id), TableWorkflow.close, CloseRoomInput(reason="admin"),
        closed_code=ErrorCode.ROOM_CLOSED, noun="room",
    )  # fmt: skip


def _handle(temporal: Client, room_id: str) -> WorkflowHandle[Any, Any]:
    return temporal.get_workflow_handle_for(TableWorkflow.run, room_workflow_id(room_id))


# -- seats -----------------------------------------------------------------------------------
class JoinBody(WireModel):
    seat: int | None = Field(default=None, ge=0, le=8)
    """A particular free seat (0-based); the lowest free one when absent."""


@router.post("/{room_id}/join", response_model=JoinResult, response_model_by_alias=True)
async def join_room(
    room_id: RoomId, caller: CurrentPlayer, db: DbDep, temporal: TemporalDep,
    body: JoinBody | None = None,
) -> JoinResult:  # fmt: skip
    """Take a seat: the room's fixed entry is reserved from your balance and becomes your
    stack. Joining mid-hand seats you for the next hand. Joining again answers the same seat."""
    await _row(db, room_id)
    result = await execute_update(
        _handle(temporal, room_id),
        TableWorkflow.join,
        JoinInput(
            player_id=caller.user_id, owner_user_id=caller.owner,
            seat=body.seat if body else None,
        ),
        closed_code=ErrorCode.ROOM_CLOSED, noun="room",
    )  # fmt: skip
    await touch(db, room_id, caller.user_id, seated=True)
    return result


@router.post(
    "/{room_id}/leave",
    response_model=LeaveResult,
    response_model_by_alias=True,
    responses={202: {"model": LeaveResult, "description": "you leave when this hand ends"}},
)
async def leave_room(
    room_id: RoomId, caller: CurrentPlayer, db: DbDep, temporal: TemporalDep
) -> LeaveResult | JSONResponse:
    """Stand up: your remaining stack returns to your balance
    (``{"returned": N, "currency": "virtual_chips"}``). During a hand you are in, the answer is
    202 with ``pending``: you check or fold from now on and leave when the hand ends."""
    await _row(db, room_id)
    result = await execute_update(
        _handle(temporal, room_id), TableWorkflow.leave, LeaveInput(player_id=caller.user_id),
        closed_code=ErrorCode.ROOM_CLOSED, noun="room",
    )  # fmt: skip
    if result.pending:
        return JSONResponse(result.model_dump(by_alias=True), status_code=202)
    return result


@router.post("/{room_id}/sit-in", response_model=ActResult, response_model_by_alias=True)
async def sit_in(
    room_id: RoomId, caller: CurrentPlayer, db: DbDep, temporal: TemporalDep
) -> ActResult:
    """Come back after sitting out (timeouts): dealt in again from the next hand."""
    await _row(db, room_id)
    result = await execute_update(
        _handle(temporal, room_id), TableWorkflow.sit_in, SitInInput(player_id=caller.user_id),
        closed_code=ErrorCode.ROOM_CLOSED, noun="room",
    )  # fmt: skip
    await touch(db, room_id, caller.user_id, seated=True)
    return result


# -- play ------------------------------------------------------------------------------------
@router.get("/{room_id}/game-state")
async def room_game_state(
    room_id: RoomId,
    request: Request,
    caller: MaybePlayer,
    db: DbDep,
    wait_for_change: Annotated[int | None, Query(alias="waitForChange", ge=0, le=2**63 - 1)] = None,
    wait_seconds: Annotated[float, Query(alias="timeout", ge=0, le=30)] = 20.0,
) -> dict[str, Any]:
    """The tournaments' game-state shape without the tournament fields, plus ``room``. With a
    credential you see your own hole cards and legal actions; without one, public play only.
    ``waitForChange=<version>`` long-polls."""
    row = await _row(db, room_id)
    cache: GameStateCache = request.app.state.game_states
    viewer = caller.user_id if caller else None
    version, _, table = await cache.get(
        None, room_workflow_id(room_id), viewer,
        after_version=wait_for_change, wait_seconds=wait_seconds,
    )  # fmt: skip
    seated = viewer is not None and any(s.player_id == viewer for s in table.seats)
    await touch(db, room_id, viewer or _anonymous(request), seated=seated)
    fields = {
        "room": {
            "status": table.room.status if table.room else row.status,
            "name": row.name,
            "speed": row.speed,
            "timeouts": {"decision": row.decision_timeout,
                         "disconnectGrace": row.disconnect_grace},
            "entry": {"amount": row.entry, "currency": CURRENCY},
        }
    }  # fmt: skip
    return game_state(version, None, table, fields)


@router.post("/{room_id}/action", response_model=ActResult, response_model_by_alias=True)
async def room_action(
    room_id: RoomId,
    body: ActBody,
    request: Request,
    caller: CurrentPlayer,
    db: DbDep,
    temporal: TemporalDep,
) -> ActResult:
    """Act on your turn: ``handNumber`` and ``turn`` from the state you answer."""
    await touch(db, room_id, caller.user_id, seated=True)
    result = await execute_update(
        _handle(temporal, room_id),
        TableWorkflow.act,
        ActInput(
            player_id=caller.user_id, hand_no=body.hand_number, turn=body.turn,
            action=body.action, amount=body.amount,
        ),
        closed_code=ErrorCode.ROOM_CLOSED, noun="room",
    )  # fmt: skip
    cache: GameStateCache = request.app.state.game_states
    cache.poke(room_workflow_id(room_id))
    return result


# -- hands and the stream --------------------------------------------------------------------
class RoomHandSummary(WireModel):
    hand_number: int
    board: list[str]
    winners: list[int]
    gross_pot: int
    net_to_winner: dict[str, int]


@router.get("/{room_id}/hands", response_model=list[RoomHandSummary], response_model_by_alias=True)
async def list_room_hands(
    room_id: RoomId,
    db: DbDep,
    after: Annotated[int, Query(ge=0, le=MAX_HAND)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[RoomHandSummary]:
    await _row(db, room_id)
    async with db.session() as session:
        hands = await session.exec(
            select(Hand)
            .where(Hand.table_id == room_workflow_id(room_id), col(Hand.hand_no) > after)
            .order_by(col(Hand.hand_no))
            .limit(limit)
        )
        out = []
        for h in hands:
            settlement = h.record.get("settlement", {})
            out.append(
                RoomHandSummary(
                    hand_number=h.hand_no,
                    board=list(h.record.get("board", [])),
                    winners=sorted({int(w) for p in h.record["pots"] for w in p["winners"]}),
                    gross_pot=settlement.get("grossPot", 0),
                    net_to_winner=settlement.get("netToWinner", {}),
                )
            )
        return out


@router.get("/{room_id}/hands/{hand_number}")
async def room_hand(
    room_id: RoomId,
    hand_number: Annotated[int, Path(ge=1, le=MAX_HAND)],
    db: DbDep,
    caller: MaybePlayer,
) -> dict[str, Any]:
    """A finished hand's record with its settlement. Hole cards are those shown down, plus
    your own if you played the hand; the revealed deck seed lets anyone audit the deal."""
    async with db.session() as session:
        hand = (
            await session.exec(
                select(Hand).where(
                    Hand.table_id == room_workflow_id(room_id), Hand.hand_no == hand_number
                )
            )
        ).first()
    if hand is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"no finished hand {hand_number} in {room_id}")
    record = dict(hand.record)
    own = {s for s, p in record.get("players", {}).items() if caller and p == caller.user_id}
    record["hole_cards"] = {
        seat: cards
        for seat, cards in record.get("hole_cards", {}).items()
        if seat in record.get("shown", {}) or seat in own
    }
    return record


@router.get(
    "/{room_id}/stream",
    responses={200: {"content": {"text/event-stream": {}}, "description": "the room stream"}},
)
async def room_stream(
    room_id: RoomId,
    request: Request,
    db: DbDep,
    after: AfterQuery = None,
) -> Any:
    """Server-Sent Events: hand_start, action, community_cards, pot_update, showdown,
    hand_result, player_join, player_leave and room_status. Public (no hole cards); resume
    with ``Last-Event-ID`` or ``?after=``. An open stream counts as an observer."""
    await _row(db, room_id)
    viewer = _anonymous(request)  # the same client's streams count once

    async def watching() -> None:
        await touch(db, room_id, viewer, seated=False)

    await watching()
    cursor = resume_point(after, request.headers.get("last-event-id"))
    return sse(db, room_id, request, cursor, on_idle=watching)


@router.get("/{room_id}/events.json", response_model=EventPage, response_model_by_alias=True)
async def room_events(
    room_id: RoomId,
    db: DbDep,
    after: AfterQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> EventPage:
    """One page of the room stream after an id, for clients that cannot read SSE."""
    await _row(db, room_id)
    return await page(db, room_id, after or 0, limit)
