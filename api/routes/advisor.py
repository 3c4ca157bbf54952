"""CoPilot: the advisor agent's socket (docs/copilot.md).

An advisor agent (its ``X-Agent-Key``) connects to ``/tournaments/{id}/advisor/ws`` or
``/rooms/{id}/advisor/ws``. The players it advises there are the entries whose
``advisorAgentId`` names it (bound at registration, checked by the tournament workflow), or
the room's players who named it when they joined (checked and bound by the join route;
``db/advice.py``). On each turn of one of
them it gets ``advice_request {requestId, playerId, handNumber, turn, deadline, legalActions,
gameState}``: ``gameState`` is that player's own game state, from the same pushed read model
the player's stream reads (api/read_model.py: no Temporal query, no Update), so it holds that
player's hole cards and nobody else's (sealed to the advisor's card key when its Agent Card
has one). The advisor answers ``{"type": "advice", "requestId"?, "playerId"?, "handNumber",
"turn", "action", "amount"?, "reason"}``; it is checked like an action (the player's current
turn, a legal action, a raise's amount within ``minRaiseTo`` .. ``maxRaiseTo``, a reason of
at most 280 characters) and stored (the first advice for a turn stands), and the player's own
stream sends it as ``advice`` (api/routes/player_stream.py). The answer is ``advice_result``
or an ``error`` with a coded refusal; an ``act`` or ``seed`` here is ``advisor_cannot_act``.

Nothing here touches the table's workflow: an advisor that is slow, absent or wrong changes
nothing about the player's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, WebSocket
from pydantic import ValidationError

from api.deps import VALID_ID
from api.errors import ApiError, refusal_of
from api.event_log import POLL_SECONDS
from api.preplay import PRE_PLAY
from api.read_model import GameStateCache, NoPublishedState
from api.services.play import current_table
from api.state import AppState, state_of
from api.stream_auth import StreamCredential, ws_caller
from api.streams import WS_CLOSE_CODES, Outbox, StreamSlots, run_socket, stream_error
from api.ws_protocol import ADVISOR_MESSAGES, AdviceAnswer
from db import advice
from db.models import Room, Tournament
from domain.errors import DomainError, ErrorCode
from wire.game_state import GameState
from wire.ids import room_workflow_id, table_workflow_id
from wire.stream_messages import AdviceRequest, AdviceResult

router = APIRouter(tags=["copilot"])
log = logging.getLogger(__name__)

ADVISOR_CLOSE_CODES = {
    **WS_CLOSE_CODES,
    ErrorCode.FORBIDDEN: 4403,
    ErrorCode.NOT_AN_ADVISOR: 4403,
}
"""A refused handshake's close code (4404 for anything else: no such tournament)."""
ENDED = frozenset({"cancelled", "ended", "settling", "closed"})
"""A tournament in these states asks for no more advice: the socket ends."""


@dataclass(frozen=True)
class Scope:
    """Where an advisor advises: a tournament's table or a cash room's."""

    id: str
    """The tournament's or the room's id (the ``advice`` rows' ``scope_id``)."""
    room: bool

    @property
    def table_id(self) -> str:
        return room_workflow_id(self.id) if self.room else table_workflow_id(self.id)

    @property
    def tournament_id(self) -> str | None:
        return None if self.room else self.id


def request_id(player_id: str, hand_number: int, turn: int) -> str:
    """An advice request's id: the turn it is for, and whose (``<hand>-<turn>-<player>``).

    >>> request_id("alice", 3, 7)
    '3-7-alice'
    """
    return f"{hand_number}-{turn}-{player_id}"


def _player_of(request: Any) -> str | None:
    if not isinstance(request, str):
        return None
    parts = request.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] else None


async def _advised(app: AppState, scope: Scope, agent_id: str) -> list[str]:
    """The players ``agent_id`` advises in ``scope``; refused when the tournament or room does
    not exist or the agent advises nobody there."""
    noun = "room" if scope.room else "tournament"
    if not VALID_ID.fullmatch(scope.id):
        raise ApiError(ErrorCode.NOT_FOUND, f"no such {noun}")
    async with app.db.session() as session:
        row = await session.get(Room if scope.room else Tournament, scope.id)
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"no such {noun}")
    players = await _players(app, scope, agent_id)
    if not players:
        raise ApiError(
            ErrorCode.NOT_AN_ADVISOR,
            f"this agent advises no player in this {noun} (a player names their advisor with"
            f" advisorAgentId when they {'join' if scope.room else 'register'})",
        )
    return players


async def _players(app: AppState, scope: Scope, agent_id: str) -> list[str]:
    if scope.room:
        return await advice.room_advised_players(app.db, scope.id, agent_id)
    return await advice.advised_players(app.db, scope.id, agent_id)


async def _player_state(
    app: AppState, scope: Scope, player_id: str, advisor_id: str | None
) -> tuple[GameState, str] | None:
    """The advised player's game state from the pushed read model, with the table it is of
    (None before the table published one, or while a multi-table tournament moves the player
    between tables); with ``advisor_id``, their hole cards sealed to the advisor's card key
    when it has one. A tournament's player is advised at the table that seats them now
    (``current_table``, docs/mtt.md "The API's table lookup"), not table 1."""
    cache: GameStateCache = app.read_model
    try:
        table_id = scope.table_id
        if scope.tournament_id is not None:
            placement = await current_table(app, scope.tournament_id, player_id)
            if placement.table_id is None:
                return None  # in transit: no turn to advise
            table_id = placement.table_id
        rendered = await cache.render(
            scope.tournament_id, table_id, player_id, sealed_to=advisor_id
        )
    except NoPublishedState:
        return None
    except ApiError as err:
        if err.code is not ErrorCode.TEMPORARILY_UNAVAILABLE:
            raise
        return None
    return rendered.state, table_id


async def advisor_messages(
    app: AppState,
    scope: Scope,
    agent_id: str,
    players: list[str],
    credential: StreamCredential,
    disconnected: Callable[[], Awaitable[bool]],
) -> AsyncIterator[dict[str, Any]]:
    """An ``advice_request`` for each new turn of each advised player, until the tournament
    ends or the room closes. The credential is checked before each request and at every idle
    tick."""
    cache: GameStateCache = app.read_model
    asked: dict[str, tuple[str, int, int]] = {}
    playing = scope.room
    while True:
        await credential.check()
        if not playing:
            async with app.db.session() as session:
                row = await session.get(Tournament, scope.id)
            if row is None or row.state in ENDED:
                return
            if row.state in PRE_PLAY:
                if await disconnected():
                    return
                await asyncio.sleep(POLL_SECONDS)
                continue
            playing = True
            players = await _players(app, scope, agent_id)
        elif scope.room:  # people join (and bind) while the room runs
            players = await _players(app, scope, agent_id)
        tables = {scope.table_id}
        for player in players:
            found = await _player_state(app, scope, player, agent_id)
            if found is None:
                continue
            state, table_id = found
            tables.add(table_id)
            turn = (state.hand_number, state.turn or 0)
            # Keyed by table too: a moved player's new table counts its own hands.
            if state.you is None or not state.you.to_act or asked.get(player) == (table_id, *turn):
                continue
            asked[player] = (table_id, *turn)
            await credential.check()
            yield {
                "event": "advice_request",
                "data": AdviceRequest.model_validate(
                    {
                        "request_id": request_id(player, *turn),
                        "player_id": player,
                        "hand_number": turn[0],
                        "turn": turn[1],
                        "deadline": state.deadline,
                        "legal_actions": state.legal_actions,
                        "game_state": state,
                    }
                ).to_wire(),
            }
        watch = cache.snapshot(scope.table_id)
        if watch is not None and watch.final:
            if scope.room:
                return
            # A multi-table tournament's table 1 may break while the others play on: the
            # tournament's own state says when the advice ends.
            async with app.db.session() as session:
                row = await session.get(Tournament, scope.id)
            if row is None or row.state in ENDED:
                return
        if await disconnected():
            return
        changes = [w.changed for w in map(cache.snapshot, sorted(tables)) if w is not None]
        await _any_change(changes, POLL_SECONDS)


async def _any_change(events: list[asyncio.Event], seconds: float) -> None:
    """Wait until one of ``events`` is set, or ``seconds``."""
    if not events:
        await asyncio.sleep(seconds)
        return
    waits = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


async def give_advice(
    app: AppState, scope: Scope, agent_id: str, body: AdviceAnswer
) -> AdviceResult:
    """Check one advice against the advised player's current turn and store it."""
    players = await _players(app, scope, agent_id)
    player = body.player_id
    if player is None:
        # The player a request's id names (``request_id``), when the advisor echoed one of
        # ours; an id of the advisor's own making names nobody.
        named = _player_of(body.request_id)
        player = named if named in players else players[0] if len(players) == 1 else None
    if player is None:
        raise ApiError(
            ErrorCode.VALIDATION_ERROR,
            "you advise several players here (or none now): name one (playerId)",
            field="playerId",
        )
    if player not in players:
        raise ApiError(
            ErrorCode.NOT_AN_ADVISOR, "you do not advise this player here", field="playerId"
        )
    found = await _player_state(app, scope, player, None)
    state = found[0] if found is not None else None
    if (
        state is None
        or state.you is None
        or not state.you.to_act
        or (state.hand_number, state.turn or 0) != (body.hand_number, body.turn)
    ):
        raise ApiError(
            ErrorCode.STALE_TURN,
            "that is not the player's current turn: advise the turn of the latest request",
            field="turn",
        )
    legal = state.legal_actions
    if legal is None or body.action not in legal.actions:
        raise ApiError(
            ErrorCode.ILLEGAL_ACTION,
            f"'{body.action}' is not among the player's legal actions"
            f" {legal.actions if legal is not None else None}",
            field="action",
        )
    amount = body.amount
    if body.action == "raise":
        low, high = legal.min_raise_to, legal.max_raise_to
        if amount is None or low is None or high is None or not low <= amount <= high:
            raise ApiError(
                ErrorCode.AMOUNT_OUT_OF_RANGE,
                f"a raise's amount is the total to raise to, {low} .. {high}",
                field="amount",
            )
    elif amount is not None:
        raise ApiError(ErrorCode.VALIDATION_ERROR, "amount is for a raise only", field="amount")
    stored = await advice.record(
        app.db,
        scope_id=scope.id,
        table_id=state.table_id or "",  # as the player's stream reads it
        player_id=player,
        hand_number=body.hand_number,
        turn=body.turn,
        advisor_agent_id=agent_id,
        action=body.action,
        amount=amount,
        reason=body.reason,
    )
    if not stored:
        raise ApiError(
            ErrorCode.ADVICE_ALREADY_GIVEN,
            "this turn already has your advice: the first one stands",
            field="turn",
        )
    return AdviceResult(ok=True, player_id=player, hand_number=body.hand_number, turn=body.turn)


async def _answer(websocket: WebSocket, scope: Scope, agent_id: str, raw: str) -> dict[str, Any]:
    request: Any = None
    try:
        message = json.loads(raw)
        if not isinstance(message, dict):
            raise ApiError(ErrorCode.VALIDATION_ERROR, "a message is a JSON object")
        request = message.get("requestId")
        kind = message.get("type")
        if kind in ("act", "seed"):
            raise ApiError(
                ErrorCode.ADVISOR_CANNOT_ACT,
                "an advisor suggests (type 'advice'); only the player acts",
                field="type",
            )
        model = ADVISOR_MESSAGES.get(kind) if isinstance(kind, str) else None
        if model is None:
            raise ApiError(ErrorCode.VALIDATION_ERROR, "a message is type 'advice'", field="type")
        body = AdviceAnswer.model_validate(message)
        caller = await ws_caller(websocket)  # checked again: a revoked key advises no more
        if caller.user_id != agent_id:
            raise ApiError(ErrorCode.UNAUTHORIZED, "the credential changed")
        result = await give_advice(state_of(websocket.app), scope, agent_id, body)
        reply = {"event": "advice_result", "data": result.to_wire()}
    except json.JSONDecodeError:
        reply = stream_error(ErrorCode.VALIDATION_ERROR.value, "not JSON")
    except ValidationError as err:
        first = err.errors()[0]
        reply = stream_error(
            ErrorCode.VALIDATION_ERROR.value, first["msg"], ".".join(str(p) for p in first["loc"])
        )
    except Exception as err:  # a coded refusal, or the service's trouble
        reply = stream_error(*refusal_of(err))
    if request is not None:
        reply["requestId"] = request
    return reply


@router.websocket("/tournaments/{tournament_id}/advisor/ws")
async def tournament_advisor_ws(websocket: WebSocket, tournament_id: str) -> None:
    """A CoPilot advisor agent's socket: advice requests for the player it advises in a
    copilot tournament, its advice back (docs/copilot.md)."""
    await _serve(websocket, Scope(tournament_id, room=False))


@router.websocket("/rooms/{room_id}/advisor/ws")
async def room_advisor_ws(websocket: WebSocket, room_id: str) -> None:
    """A CoPilot advisor agent's socket: advice requests for the players it advises in a
    copilot cash room, its advice back (docs/copilot.md)."""
    await _serve(websocket, Scope(room_id, room=True))


async def _serve(websocket: WebSocket, scope: Scope) -> None:
    await websocket.accept()  # first, so a refusal reaches the client as its close code
    try:
        caller = await ws_caller(websocket)
        if not caller.is_agent:
            raise ApiError(
                ErrorCode.FORBIDDEN, "the advisor socket is an agent's: connect with its key"
            )
        players = await _advised(state_of(websocket.app), scope, caller.user_id)
    except (ApiError, DomainError) as err:
        await websocket.close(
            code=ADVISOR_CLOSE_CODES.get(err.code, 4404),
            reason=f"{err.code.value}: {err.message}"[:120],
        )
        return
    agent_id = caller.user_id
    slots: StreamSlots = state_of(websocket.app).stream_slots
    try:
        release = slots.acquire(websocket)
    except ApiError as err:
        await websocket.close(code=4429, reason=err.code.value)
        return
    closed = asyncio.Event()
    credential = StreamCredential(websocket, agent_id)
    outbox = Outbox()

    async def disconnected() -> bool:
        return closed.is_set()

    async def pump() -> None:
        try:
            async for message in advisor_messages(
                state_of(websocket.app), scope, agent_id, players, credential, disconnected
            ):
                await outbox.put(message)
        except ApiError as err:
            if err.code is not ErrorCode.UNAUTHORIZED:
                raise
            await outbox.put({"close": f"{err.code.value}: {err.message}"[:120]})
            return
        await outbox.put({"event": "end"})

    async def send() -> None:
        while True:
            message = await outbox.get()
            reason = message.get("close")
            if reason is None and message.get("event") == "advice_request":
                try:
                    await credential.check()  # it carries the player's cards (N6)
                except ApiError as err:
                    if err.code is not ErrorCode.UNAUTHORIZED:
                        raise
                    reason = f"{err.code.value}: {err.message}"[:120]
            if reason is not None:
                await websocket.close(code=4401, reason=reason)
                return
            await websocket.send_json(message)
            if message.get("event") == "end":
                await websocket.close()
                return

    async def receive() -> None:
        while True:
            raw = await websocket.receive_text()
            await outbox.put(await _answer(websocket, scope, agent_id, raw))

    try:
        stalled = await run_socket(send(), pump(), receive())
    finally:
        closed.set()
        release()
    if stalled:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(websocket.close(code=1008, reason="too_slow"), 5)
