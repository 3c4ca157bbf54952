"""Playing at a table, whichever channel asks (a tournament's or a room's HTTP route, the
WebSocket, the fast path): the caller's game state, an action, a seed, sitting in.

A table is named one way, ``TableRef(kind, id)``: a tournament's table or a cash room, by the
tournament's or the room's id (the review's "kind spelled three ways" on the act path:
``room_id is not None``, ``room: bool``, ``tournament_id is None``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field
from temporalio.client import WorkflowHandle

from api import preplay
from api.errors import ApiError
from api.game_state import WatchedTournament, before_play, in_transit
from api.preplay import PrePlayRows, row_version, tournament_row
from api.presence import touch
from api.read_model import STORE_TROUBLE, NoPublishedState, Rendered, unavailable
from api.state import AppState
from api.stream_auth import StreamCredential
from api.updates import execute_update
from db.models import Room, Tournament
from domain.errors import ErrorCode
from domain.mtt.seating import tables_needed
from wire.ids import room_workflow_id, table_workflow_id
from wire.messages import TournamentPhase, TournamentView, WireModel
from wire.table_messages import ActInput, ActResult, SeedInput, SeedResult, SitInInput
from workflows.room import RoomWorkflow
from workflows.table import TableWorkflow

PRE_PLAY = preplay.PRE_PLAY
"""A tournament in these states has no table yet (api/preplay.py)."""
TRANSIT_RECHECK = 0.25
"""A long-poll in transit looks for the player's table at most this often (one indexed read
each time, after one of the tournament's tables announced a change)."""


@dataclass(frozen=True, slots=True)
class TableRef:
    """A table by what it belongs to: a tournament's (by the tournament's id) or a cash room
    (by the room's id)."""

    kind: Literal["tournament", "room"]
    id: str
    key: str | None = None
    """The table's workflow id when it is not the default one: a multi-table tournament's
    table the caller sits at (``current_table``)."""

    @classmethod
    def tournament(cls, tournament_id: str) -> TableRef:
        return cls("tournament", tournament_id)

    @classmethod
    def room(cls, room_id: str) -> TableRef:
        return cls("room", room_id)

    @property
    def is_room(self) -> bool:
        return self.kind == "room"

    @property
    def table_id(self) -> str:
        """The table's workflow id (and its key in the read model)."""
        if self.key is not None:
            return self.key
        return room_workflow_id(self.id) if self.is_room else table_workflow_id(self.id)

    @property
    def tournament_id(self) -> str | None:
        """The tournament whose table it is (None: a room, which has no tournament view)."""
        return None if self.is_room else self.id

    @property
    def noun(self) -> str:
        return "room" if self.is_room else "tournament"

    def handle(self, state: AppState) -> WorkflowHandle[Any, Any]:
        workflow = RoomWorkflow if self.is_room else TableWorkflow
        return state.temporal.get_workflow_handle_for(workflow.run, self.table_id)


# -- which table: a multi-table tournament's lookup -------------------------------------------
@dataclass(frozen=True, slots=True)
class Placement:
    """Where a player of a tournament is: ``table_id`` (None: in transit between two tables
    of a multi-table tournament); ``moved``: not where this replica last found them."""

    table_id: str | None
    moved: bool = False
    tournament: WatchedTournament | None = None
    version: int = 0
    """The game state's version of table 1's watch (what an in-transit state answers)."""


def _seats(watch: Any, player_id: str) -> bool:
    table = watch.table if watch is not None else None
    return table is not None and any(s.player_id == player_id for s in table.view.seats)


def _is_mtt(tournament: WatchedTournament) -> bool:
    settings = tournament.settings
    return settings.max_entrants is not None and settings.max_entrants > settings.seats


async def current_table(state: AppState, tournament_id: str, player_id: str | None) -> Placement:
    """The table that seats ``player_id`` in the tournament now, from the read model (never a
    Temporal query; docs/mtt.md, "The API's table lookup"). A Sit-and-Go, a spectator, a
    busted entrant and a tournament that is not playing: table 1, as always. An MTT's live
    entrant: the table this replica last found them at if its watch still seats them (no
    read), else table 1 if it seats them, else one indexed read of the tournament's table
    rows (``GameStateCache.seating``); seated at none: in transit.
    ``NoPublishedState`` when table 1 has published nothing yet."""
    cache = state.read_model
    first = table_workflow_id(tournament_id)
    watch = await cache.watched(tournament_id, first)
    tournament = watch.composing
    if (
        player_id is None
        or tournament is None
        or not _is_mtt(tournament)
        or tournament.view.state != TournamentPhase.PLAYING
        or tournament.view.stacks.get(player_id, 0) <= 0
    ):
        return Placement(first)
    memo = (tournament_id, player_id)
    known = cache.placed.get(memo)
    for key in (known, first):
        if key is not None and _seats(cache.snapshot(key), player_id):
            cache.placed[memo] = key
            return Placement(key, moved=known is not None and key != known)
    view = tournament.view
    count = tables_needed(view.field_size or view.registered_count, view.seats)
    if view.settings.get("lateRegistrationSeconds"):
        # Late entrants open tables numbered past the sealed field's (docs/mtt.md): every
        # table ever opened seated an entry of its own when it opened, so the entries bound
        # the table numbers.
        count = max(count, view.field_size or 0)
    keys = [table_workflow_id(tournament_id, n) for n in range(1, count + 1)]
    try:
        found = await cache.seating(keys, player_id)
    except STORE_TROUBLE:
        raise ApiError(
            ErrorCode.TEMPORARILY_UNAVAILABLE,
            "your table could not be looked up: retry in a moment",
            retry_after_seconds=1,
        ) from None
    # A move is published by two tables: the new one may show the player before the old one
    # shows them gone. The new one is the one this replica did not know them at.
    fresh = [key for key in found if key != known] or found
    if not fresh:
        return Placement(
            None, moved=known is not None, tournament=tournament, version=watch.version
        )
    cache.placed[memo] = fresh[0]
    return Placement(fresh[0], moved=known is not None and fresh[0] != known)


@dataclass
class Placed:
    """A per-player stream's state: the table that seats the viewer now (None while an MTT
    moves them), the table they are moving to (``bound_for``, from the tournament's view of
    the entries in transit), and the game state."""

    table_id: str | None
    rendered: Rendered
    bound_for: str | None = None


async def placed_state(state: AppState, tournament_id: str, viewer: str) -> Placed:
    """The viewer's game state at the table that seats them now, with that table's id (None
    and the in-transit state while an MTT moves them): the per-player streams' state."""
    placement = await current_table(state, tournament_id, viewer)
    if placement.table_id is not None:
        rendered = await state.read_model.render(tournament_id, placement.table_id, viewer)
        return Placed(placement.table_id, rendered)
    assert placement.tournament is not None
    return Placed(
        None, _in_transit(placement, viewer), bound_for(placement.tournament.view, viewer)
    )


def bound_for(view: TournamentView, player_id: str) -> str | None:
    """The table an MTT's entry in transit is moving to, as the tournament published it
    (``mtt.inTransit``), or None (not in transit, or a view from before it named it)."""
    number = view.mtt.in_transit.get(player_id) if view.mtt is not None else None
    return table_workflow_id(view.tournament_id, number) if number is not None else None


def _in_transit(placement: Placement, viewer: str) -> Rendered:
    assert placement.tournament is not None
    moving = in_transit(placement.version, placement.tournament, viewer)
    body = json.dumps(moving.to_wire(), separators=(",", ":")).encode()
    return Rendered(placement.version, body, moving)


async def seated_table(state: AppState, table: TableRef, player_id: str) -> TableRef:
    """The table a request of ``player_id``'s goes to: a room's, or the tournament table that
    seats them now; ``409 player_in_transit`` (retry in a moment) while an MTT moves them."""
    if table.is_room or table.key is not None:
        return table
    try:
        placement = await current_table(state, table.id, player_id)
    except NoPublishedState:
        return table  # the table answers as it always did
    if placement.table_id is None:
        raise ApiError(
            ErrorCode.PLAYER_IN_TRANSIT,
            "you are moving to another table: retry in a moment",
            retry_after_seconds=1,
        )
    return TableRef(table.kind, table.id, placement.table_id)


# -- bodies ------------------------------------------------------------------------------------
class ActBody(WireModel):
    hand_number: int = Field(ge=1, le=2**31 - 1)
    turn: int = Field(ge=0, le=2**31 - 1)
    """The turn id from the state you answer (a stale one is refused with stale_turn)."""
    action: Literal["fold", "check", "call", "raise", "all_in"]
    amount: int | None = Field(default=None, ge=1, le=10**15, strict=True)
    """For raise: the total to raise to."""
    table_id: str | None = Field(default=None, min_length=1, max_length=200)
    """Optional: the ``tableId`` of the state you answer. An action for a table you no longer
    sit at (a multi-table tournament moved you) is refused ``409 table_moved``."""

    def for_player(self, player_id: str, key: str | None = None) -> ActInput:
        return ActInput(
            player_id=player_id,
            hand_no=self.hand_number,
            turn=self.turn,
            action=self.action,
            amount=self.amount,
            key=key,
        )


class SeedBody(WireModel):
    """Your entropy for the next hand's deal (docs/fairness.md): the game state's
    ``nextDeck`` names the hand and the root your seed answers."""

    hand_number: int = Field(ge=1, le=2**31 - 1)
    commitment: str = Field(pattern=r"^[0-9a-fA-F]{64}$")
    seed: str = Field(min_length=2, max_length=128, pattern=r"^([0-9a-fA-F]{2})+$")
    """Hex, 1 to 64 bytes: make it random (the client library does)."""

    def for_player(self, player_id: str) -> SeedInput:
        return SeedInput(
            player_id=player_id,
            hand_number=self.hand_number,
            commitment=self.commitment,
            seed=self.seed,
        )


# -- the game state ----------------------------------------------------------------------------
async def tournament_game_state(
    state: AppState,
    tournament_id: str,
    viewer: str,
    wait_for_change: int | None,
    wait_seconds: float,
    credential: StreamCredential,
) -> bytes:
    """``GET /tournaments/{id}/game-state``'s body for a caller already authenticated, with
    its parameters already validated: the route and its fast path (api/fastpath.py) both
    serve this, so they cannot differ. A long-poll checks ``credential`` again after its
    wait: it may have expired or been revoked meanwhile (security review N6)."""
    wait_seconds = min(wait_seconds, state.settings.long_poll_max_seconds)
    cache = state.read_model
    table_id = table_workflow_id(tournament_id)
    if cache.snapshot(table_id) is None:
        # Not served here yet: the tournament row says whether there is a table to read. A
        # long-poll starts from this replica's watch of the row when it has one (no read);
        # a plain read reads the row (a writer reads its write).
        rows = state.pre_play
        polls = wait_for_change is not None and wait_seconds > 0
        row = await (rows.row(tournament_id) if polls else tournament_row(state.db, tournament_id))
        if row.state in PRE_PLAY:
            before = await _before_play(
                rows, row, viewer, wait_for_change, wait_seconds, tournament_id
            )
            if before is not None:
                return before
    try:
        body = await _tournament_table_state(
            state, tournament_id, viewer, wait_for_change, wait_seconds
        )
    except NoPublishedState:
        raise unavailable() from None
    if wait_for_change is not None and wait_seconds > 0:
        await credential.check()
    return body


async def _tournament_table_state(
    state: AppState,
    tournament_id: str,
    viewer: str,
    wait_for_change: int | None,
    wait_seconds: float,
) -> bytes:
    """The viewer's state at the table that seats them now (``current_table``). In transit,
    a long-poll waits for the tournament's tables to announce a change and looks again, so
    it follows the player to the new table; a player who moved since this replica last
    served them gets the new table's state at once (its version counts another table's)."""
    cache = state.read_model
    deadline = time.monotonic() + wait_seconds
    while True:
        placement = await current_table(state, tournament_id, viewer)
        remaining = max(0.0, deadline - time.monotonic())
        if placement.table_id is not None:
            rendered = await cache.render(
                tournament_id,
                placement.table_id,
                viewer,
                after_version=None if placement.moved else wait_for_change,
                wait_seconds=remaining,
            )
            return rendered.body
        if wait_for_change is None or remaining <= 0:
            return _in_transit(placement, viewer).body
        await cache.announced(f"{table_workflow_id(tournament_id, 0)[:-1]}", remaining)
        await asyncio.sleep(min(TRANSIT_RECHECK, max(0.0, deadline - time.monotonic())))


async def _before_play(
    rows: PrePlayRows,
    row: Tournament,
    viewer: str,
    wait_for_change: int | None,
    wait_seconds: float,
    tournament_id: str,
) -> bytes | None:
    """Before a table exists the tournament row is the state: a long-poll parks on this
    replica's watch of it, woken by the read model's notifications (api/preplay.py; security
    review N5: it used to re-read the row every 0.25 s per request). None: play started
    meanwhile, and the table answers."""
    if wait_for_change is not None and wait_seconds > 0 and row_version(row) == wait_for_change:
        row = await rows.wait(tournament_id, viewer, row, wait_for_change, wait_seconds)
    if row.state not in PRE_PLAY:
        return None
    game_state = before_play(
        row_version(row),
        row.id,
        row.settings,
        state=row.state,
        registered_count=row.registered_count,
        field_size=row.field_size,
    )
    return json.dumps(game_state.to_wire(), separators=(",", ":")).encode()


async def room_game_state(
    state: AppState,
    room_id: str,
    viewer: str | None,
    wait_for_change: int | None,
    wait_seconds: float,
    credential: StreamCredential | None,
) -> Rendered:
    """``GET /rooms/{id}/game-state``: the viewer's state (None: a spectator's), long-polled
    like a tournament's; ``404 not_found`` for a room the read model does not know. A
    long-poll checks ``credential`` again after its wait (security review N6)."""
    wait_seconds = min(wait_seconds, state.settings.long_poll_max_seconds)
    table = TableRef.room(room_id)
    cache = state.read_model
    if cache.snapshot(table.table_id) is None:
        async with state.db.session() as session:
            if await session.get(Room, room_id) is None:
                raise ApiError(ErrorCode.NOT_FOUND, "no such room")
    try:
        rendered = await cache.render(
            None, table.table_id, viewer, after_version=wait_for_change, wait_seconds=wait_seconds
        )
    except NoPublishedState:
        raise unavailable() from None
    if credential is not None and wait_for_change is not None and wait_seconds > 0:
        # The credential may have ended while the request waited (security review N6).
        await credential.check()
    return rendered


# -- acting ------------------------------------------------------------------------------------
def act_update_id(player_id: str, body: ActBody, key: str | None) -> str:
    """The act Update's id: Temporal answers a second Update with the id of one it already
    completed in this run with the first one's outcome, so a retried action (a lost
    response, a timeout) gets its first answer instead of ``stale_turn``, and costs no
    history. A refused action is not remembered: its retry is checked again. A key names one
    action of one turn: reused on a later turn it is a new action; reused on the same turn
    with another action or amount it is another Update, which the table refuses
    (``idempotency_key_reused``, security review N2) instead of Temporal answering it with
    the first action's outcome. Hashed, so no player id or key can be spelled to collide
    with another player's."""
    parts: list[object] = [player_id, body.hand_number, body.turn]
    parts += ["key", key] if key is not None else []
    parts += [body.action, body.amount]
    digest = hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()
    return f"act-{digest[:32]}"


async def act(
    state: AppState, table: TableRef, player_id: str, body: ActBody, key: str | None
) -> ActResult:
    """One action at a table, whichever channel sent it (a tournament's or a room's HTTP
    route, the WebSocket): the act Update under its retry-safe id, a room's presence once the
    room took it, and the answer in game-state terms (read-your-writes on this replica). A
    tournament's action goes to the table that seats the player now (``seated_table``)."""
    table = await seated_table(state, table, player_id)
    if body.table_id is not None and body.table_id != table.table_id:
        raise ApiError(ErrorCode.TABLE_MOVED, "you no longer sit at that table")
    workflow = RoomWorkflow if table.is_room else TableWorkflow
    result = await execute_update(
        table.handle(state),
        workflow.act,
        body.for_player(player_id, key),
        closed_code=ErrorCode.ROOM_CLOSED if table.is_room else ErrorCode.STALE_TURN,
        noun=table.noun,
        update_id=act_update_id(player_id, body, key),
    )
    if table.is_room:
        # Presence only once the room took the action: an unknown room id writes nothing
        # (security review L7).
        await touch(state.db, table.id, player_id, seated=True)
    write, hold = False, 0.0
    if result.state is not None:
        # The table did not publish this decision (``ACT_ANSWER_PATCH``): its answer carries
        # it, and this replica writes it (``acted``: before it answers, or behind the answer
        # when it can serve it at once; the worker writes it too). The test-only fault
        # switches stall or skip the write (docs/operations.md).
        settings = state.settings
        hold = settings.test_fault_stall_act_write_seconds
        write = not settings.test_fault_skip_act_write
    version = await state.read_model.acted(
        table.tournament_id, table.table_id, player_id, result, write=write, hold=hold
    )
    return ActResult(version=version, hand_number=result.hand_number, turn=result.turn)


async def seed(state: AppState, table: TableRef, player_id: str, body: SeedBody) -> SeedResult:
    """One seed at a table, whichever channel sent it. Every seed is checked by the table:
    a second one for the same seat and hand (a retry included) is ``409 already_seeded``, so
    a client always learns whether the seed it sent is the one the table holds. (The Update
    used to be named ``seed:<player>:<hand>``, and Temporal answered a second seed under that
    name with the first one's answer, unchecked: ``200`` for a seed it ignored.)"""
    table = await seated_table(state, table, player_id)
    workflow = RoomWorkflow if table.is_room else TableWorkflow
    result: SeedResult = await execute_update(
        table.handle(state),
        workflow.seed,
        body.for_player(player_id),
        closed_code=ErrorCode.ROOM_CLOSED if table.is_room else ErrorCode.STALE_COMMITMENT,
        noun=table.noun,
    )
    return result


async def sit_in(state: AppState, table: TableRef, player_id: str) -> ActResult:
    """Come back after sitting out. At a tournament's table the answer's version is the game
    state's once this replica serves it (read-your-writes); at a room it is the table's, and
    the player's presence is recorded."""
    table = await seated_table(state, table, player_id)
    if table.is_room:
        result: ActResult = await execute_update(
            table.handle(state),
            RoomWorkflow.sit_in,
            SitInInput(player_id=player_id),
            closed_code=ErrorCode.ROOM_CLOSED,
            noun="room",
        )
        await touch(state.db, table.id, player_id, seated=True)
        return result
    result = await execute_update(
        table.handle(state),
        TableWorkflow.sit_in,
        SitInInput(player_id=player_id),
        closed_code=ErrorCode.INVALID_STATE,
    )
    version = await state.read_model.caught_up(table.id, table.table_id, result.version)
    return result.model_copy(update={"version": version})
