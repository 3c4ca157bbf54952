"""Playing at a table, whichever channel asks (a tournament's or a room's HTTP route, the
WebSocket, the fast path): the caller's game state, an action, a seed, sitting in.

A table is named one way, ``TableRef(kind, id)``: a tournament's table or a cash room, by the
tournament's or the room's id (the review's "kind spelled three ways" on the act path:
``room_id is not None``, ``room: bool``, ``tournament_id is None``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field
from temporalio.client import WorkflowHandle

from api import preplay
from api.errors import ApiError
from api.game_state import before_play
from api.preplay import PrePlayRows, row_version, tournament_row
from api.presence import touch
from api.read_model import NoPublishedState, Rendered, unavailable
from api.state import AppState
from api.stream_auth import StreamCredential
from api.updates import execute_update
from core.settings import FAULT_HELD
from db.models import Room, Tournament
from domain.errors import ErrorCode
from wire.ids import room_workflow_id, table_workflow_id
from wire.messages import WireModel
from wire.table_messages import ActInput, ActResult, SeedInput, SeedResult, SitInInput
from workflows.room import RoomWorkflow
from workflows.table import TableWorkflow

log = logging.getLogger("sng.api.play")

PRE_PLAY = preplay.PRE_PLAY
"""A tournament in these states has no table yet (api/preplay.py)."""


@dataclass(frozen=True, slots=True)
class TableRef:
    """A table by what it belongs to: a tournament's (by the tournament's id) or a cash room
    (by the room's id)."""

    kind: Literal["tournament", "room"]
    id: str

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


# -- bodies ------------------------------------------------------------------------------------
class ActBody(WireModel):
    hand_number: int = Field(ge=1, le=2**31 - 1)
    turn: int = Field(ge=0, le=2**31 - 1)
    """The turn id from the state you answer (a stale one is refused with stale_turn)."""
    action: Literal["fold", "check", "call", "raise", "all_in"]
    amount: int | None = Field(default=None, ge=1, le=10**15, strict=True)
    """For raise: the total to raise to."""

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
        rendered = await cache.render(
            tournament_id,
            table_id,
            viewer,
            after_version=wait_for_change,
            wait_seconds=wait_seconds,
        )
    except NoPublishedState:
        raise unavailable() from None
    if wait_for_change is not None and wait_seconds > 0:
        await credential.check()
    return rendered.body


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
    room took it, and the answer in game-state terms (read-your-writes on this replica)."""
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
    write = False
    if result.state is not None:
        # The table did not publish this decision (``ACT_ANSWER_PATCH``): its answer carries
        # it, and this replica writes it before it answers (``acted``; the worker writes it
        # too). The test-only fault switches stall or skip the write (docs/operations.md).
        settings = state.settings
        stall = settings.test_fault_stall_act_write_seconds
        if stall:  # killed meanwhile, this replica never writes it
            log.warning(FAULT_HELD, table.table_id, result.state.view.version, stall)
            await asyncio.sleep(stall)
        write = not settings.test_fault_skip_act_write
    version = await state.read_model.acted(
        table.tournament_id, table.table_id, player_id, result, write=write
    )
    return ActResult(version=version, hand_number=result.hand_number, turn=result.turn)


async def seed(state: AppState, table: TableRef, player_id: str, body: SeedBody) -> SeedResult:
    """One seed at a table, whichever channel sent it. Every seed is checked by the table:
    a second one for the same seat and hand (a retry included) is ``409 already_seeded``, so
    a client always learns whether the seed it sent is the one the table holds. (The Update
    used to be named ``seed:<player>:<hand>``, and Temporal answered a second seed under that
    name with the first one's answer, unchecked: ``200`` for a seed it ignored.)"""
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
