"""Playing: the caller's game state (long-pollable, served from a shared cache) and actions."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Request, Response
from pydantic import Field
from temporalio.client import WorkflowHandle

from api import preplay
from api.auth import CurrentPlayer
from api.deps import ID_PATTERN, TemporalDep, TournamentId
from api.game_state import before_play
from api.preplay import PrePlayRows, row_version, tournament_row
from api.presence import touch
from api.read_model import (
    GameStateCache,
    LongPollDep,
    NoPublishedState,
    unavailable,
)
from api.state import state_of
from api.stream_auth import StreamCredential
from api.updates import execute_update
from core.settings import FAULT_HELD, Settings
from db.engine import Database
from db.models import Tournament
from domain.errors import ErrorCode
from wire.game_state import GameState
from wire.ids import table_workflow_id
from wire.messages import WireModel
from wire.table_messages import ActInput, ActResult, SeedInput, SeedResult, SitInInput
from workflows.room import RoomWorkflow
from workflows.table import TableWorkflow

router = APIRouter(prefix="/tournaments", tags=["play"])
log = logging.getLogger("sng.api.play")

PRE_PLAY = preplay.PRE_PLAY
"""A tournament in these states has no table yet (api/preplay.py)."""


@router.get(
    "/{tournament_id}/game-state", response_model=None, responses={200: {"model": GameState}}
)
async def get_game_state(
    tournament_id: TournamentId,
    request: Request,
    caller: CurrentPlayer,
    poll: LongPollDep,
) -> dict[str, Any]:
    """The caller's view: the table (own hole cards only), legal actions with amounts, and the
    tournament fields. ``waitForChange=<version>`` long-polls until the version moves on (or
    ``timeout`` seconds pass)."""
    body = await game_state_body(
        request.app,
        tournament_id,
        caller.user_id,
        poll.wait_for_change,
        poll.wait_seconds,
        StreamCredential(request, caller.user_id),
    )
    return Response(body, media_type="application/json")  # type: ignore[return-value]


async def game_state_body(
    app: Any,
    tournament_id: str,
    viewer: str,
    wait_for_change: int | None,
    wait_seconds: float,
    credential: StreamCredential,
) -> bytes:
    """The route's answer for a caller already authenticated, with its parameters already
    validated: the route and its fast path (api/fastpath.py) both serve this, so they cannot
    differ. A long-poll checks ``credential`` again after its wait: it may have expired or
    been revoked meanwhile (security review N6)."""
    wait_seconds = min(wait_seconds, state_of(app).settings.long_poll_max_seconds)
    cache: GameStateCache = state_of(app).read_model
    table_id = table_workflow_id(tournament_id)
    if cache.snapshot(table_id) is None:
        # Not served here yet: the tournament row says whether there is a table to read. A
        # long-poll starts from this replica's watch of the row when it has one (no read);
        # a plain read reads the row (a writer reads its write).
        rows: PrePlayRows = state_of(app).pre_play
        polls = wait_for_change is not None and wait_seconds > 0
        db: Database = state_of(app).db
        row = await (rows.row(tournament_id) if polls else tournament_row(db, tournament_id))
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
    state = before_play(
        row_version(row),
        row.id,
        row.settings,
        state=row.state,
        registered_count=row.registered_count,
        field_size=row.field_size,
    )
    return json.dumps(state.to_wire(), separators=(",", ":")).encode()


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


@router.post("/{tournament_id}/act", response_model=ActResult, response_model_by_alias=True)
async def act(
    tournament_id: TournamentId,
    body: ActBody,
    request: Request,
    caller: CurrentPlayer,
    idempotency_key: IdempotencyKey = None,
) -> ActResult:
    """Act on your turn. The answer's ``version`` is the game state's, ready for
    ``waitForChange``."""
    return await act_at_table(
        request.app,
        table_workflow_id(tournament_id),
        caller.user_id,
        body,
        idempotency_key,
        tournament_id=tournament_id,
    )


async def act_at_table(
    app: Any,
    table_id: str,
    player_id: str,
    body: ActBody,
    key: str | None,
    *,
    tournament_id: str | None = None,
    room_id: str | None = None,
) -> ActResult:
    """One action at a table, whichever channel sent it (a tournament's or a room's HTTP
    route, the WebSocket): the act Update under its retry-safe id, a room's presence once the
    room took it, and the answer in game-state terms (read-your-writes on this replica)."""
    workflow_type = RoomWorkflow if room_id is not None else TableWorkflow
    handle: WorkflowHandle[Any, Any] = state_of(app).temporal.get_workflow_handle_for(
        workflow_type.run, table_id
    )
    result = await execute_update(
        handle,
        workflow_type.act,
        body.for_player(player_id, key),
        closed_code=ErrorCode.ROOM_CLOSED if room_id else ErrorCode.STALE_TURN,
        noun="room" if room_id else "tournament",
        update_id=act_update_id(player_id, body, key),
    )
    if room_id is not None:
        # Presence only once the room took the action: an unknown room id writes nothing
        # (security review L7).
        await touch(state_of(app).db, room_id, player_id, seated=True)
    write = False
    if result.state is not None:
        # The table did not publish this decision (``ACT_ANSWER_PATCH``): its answer carries
        # it, and this replica writes it before it answers (``acted``; the worker writes it
        # too). The test-only fault switches stall or skip the write (docs/operations.md).
        settings: Settings = state_of(app).settings
        stall = settings.test_fault_stall_act_write_seconds
        if stall:  # killed meanwhile, this replica never writes it
            log.warning(FAULT_HELD, table_id, result.state.view.version, stall)
            await asyncio.sleep(stall)
        write = not settings.test_fault_skip_act_write
    cache: GameStateCache = state_of(app).read_model
    version = await cache.acted(tournament_id, table_id, player_id, result, write=write)
    return ActResult(version=version, hand_number=result.hand_number, turn=result.turn)


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


async def seed_at_table(
    app: Any, table_id: str, player_id: str, body: SeedBody, *, room: bool
) -> SeedResult:
    """One seed at a table, whichever channel sent it. Every seed is checked by the table:
    a second one for the same seat and hand (a retry included) is ``409 already_seeded``, so
    a client always learns whether the seed it sent is the one the table holds. (The Update
    used to be named ``seed:<player>:<hand>``, and Temporal answered a second seed under that
    name with the first one's answer, unchecked: ``200`` for a seed it ignored.)"""
    workflow_type = RoomWorkflow if room else TableWorkflow
    handle: WorkflowHandle[Any, Any] = state_of(app).temporal.get_workflow_handle_for(
        workflow_type.run, table_id
    )
    result: SeedResult = await execute_update(
        handle,
        workflow_type.seed,
        body.for_player(player_id),
        closed_code=ErrorCode.ROOM_CLOSED if room else ErrorCode.STALE_COMMITMENT,
        noun="room" if room else "tournament",
    )
    return result


@router.post("/{tournament_id}/seed", response_model=SeedResult, response_model_by_alias=True)
async def seed(
    tournament_id: TournamentId, body: SeedBody, request: Request, caller: CurrentPlayer
) -> SeedResult:
    """Send a seed for the next hand before it is dealt: with the other seats' seeds it fixes
    which committed card goes where (docs/fairness.md). Refused with ``stale_commitment``
    once that hand is dealt, ``already_seeded`` for a second seed."""
    return await seed_at_table(
        request.app, table_workflow_id(tournament_id), caller.user_id, body, room=False
    )


async def _in_game_state_terms(
    request: Request, tournament_id: str, result: ActResult
) -> ActResult:
    """The table answers with its own version; answer with the game state's, once this
    replica serves it (read-your-writes)."""
    cache: GameStateCache = state_of(request.app).read_model
    version = await cache.caught_up(tournament_id, table_workflow_id(tournament_id), result.version)
    return result.model_copy(update={"version": version})


@router.post("/{tournament_id}/sit-in", response_model=ActResult, response_model_by_alias=True)
async def sit_in(
    tournament_id: TournamentId, request: Request, caller: CurrentPlayer, temporal: TemporalDep
) -> ActResult:
    """Come back after sitting out (two timeouts in a row): you get your decisions again from
    your next turn. Refused with ``invalid_state`` when you are not sitting out."""
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TableWorkflow.run, table_workflow_id(tournament_id)
    )
    result = await execute_update(
        handle,
        TableWorkflow.sit_in,
        SitInInput(player_id=caller.user_id),
        closed_code=ErrorCode.INVALID_STATE,
    )
    return await _in_game_state_terms(request, tournament_id, result)
