"""Per-player streams (docs/events.md): one player's view of a tournament or a room, pushed.

Over SSE (``GET /tournaments/{id}/me/stream``, ``GET /rooms/{id}/me/stream``) and over a
WebSocket (``/tournaments/{id}/me/ws``, ``/rooms/{id}/me/ws``) a player gets, in order:

- every event of the public log (``player_eliminated``, ``hand_result``, ``blind_level_changed``,
  ``tournament_state_changed``, ``tournament_payout_settled``; a room's stream events);
- ``game_state``: the player's own game state (the ``GET …/game-state`` body) whenever its
  version changes, and always right before a ``hand_result``, so a bust reads
  ``player_eliminated`` → ``game_state`` → ``hand_result`` as the seed orders them (a turn in
  the next hand is asked for after the result);
- ``action_required`` when it is the player's turn: hand, turn, legal actions with amounts,
  and the deadline.
- ``advice`` in a copilot tournament or room: the player's advisor's suggestion for their
  current turn, after its ``action_required`` (api/routes/advisor.py, docs/copilot.md).

Each message's id is ``<log id>-<game-state version>``. Resuming (``Last-Event-ID`` or
``?after=``) replays the log after the log id and sends the current game state if its version
is another one: game states supersede each other, so the newest is all a client needs. The
state comes from the pushed read model (LISTEN, no Temporal query); the log is read every
``POLL_SECONDS`` while idle, and at once when the state moves. A newer state of the running
hand the stream last sent goes out before that read (nothing the log holds is due before it:
a hand's result follows its end), so a turn within a hand does not wait for it.

Over the WebSocket the player can also act: ``{"type": "act", "handNumber", "turn",
"action", "amount"?, "idempotencyKey"?}`` answers ``act_result`` (the HTTP act's body), and
seed the next hand: ``{"type": "seed", "handNumber", "commitment", "seed"}`` answers
``seed_result`` (docs/fairness.md); a refusal is ``error`` (``{code, message, field?}``, the
HTTP refusals' codes), each echoing the message's ``requestId`` when it had one. The socket's
messages either way are an AsyncAPI document, ``GET /asyncapi.json`` (api/ws_protocol.py,
generated from the models these messages are made and parsed with).

A stream ends with its credential (security review N6, ``api/stream_auth.py``): it is checked
again before each private message and on every idle tick; once it is expired or revoked a
WebSocket closes with 4401 and an SSE stream ends after an ``error`` event ``unauthorized``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Query, Request, Response, WebSocket
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from api.auth import Caller, CurrentPlayer
from api.deps import VALID_ID, RoomId, TournamentId
from api.errors import ApiError, refusal_of
from api.event_log import PAGE, PING_SECONDS, POLL_SECONDS, ended_by, is_final, read_page
from api.game_state import action_required
from api.preplay import PRE_PLAY
from api.presence import stream_dropped, stream_open, touch
from api.read_model import NoPublishedState, Rendered
from api.services import play
from api.services.play import TableRef, placed_state
from api.state import AppState, state_of
from api.stream_auth import StreamCredential, ws_caller
from api.streams import WS_CLOSE_CODES, Outbox, StreamSlots, run_socket, stream_error
from api.ws_protocol import CLIENT_MESSAGES, ActRequest, SeedRequest, asyncapi_document
from db import advice
from db.models import Room, Tournament
from domain.errors import DomainError, ErrorCode
from wire.events import room_event_on_wire
from wire.ids import room_workflow_id, table_workflow_id
from wire.stream_messages import Advice

router = APIRouter(tags=["player streams"])
log = logging.getLogger(__name__)

MAX_ID = 2**63 - 1


@dataclass
class Cursor:
    log: int = 0
    version: int = -1

    @property
    def id(self) -> str:
        return f"{self.log}-{self.version}"


def parse_cursor(*values: str | None) -> Cursor:
    """The latest of the given ids (``<log id>-<version>``); a malformed one counts as none."""
    best = Cursor()
    for value in values:
        log, sep, version = (value or "").strip().partition("-")
        if not sep or not (log.isascii() and log.isdigit() and len(log) <= 19):
            continue
        if not (version.isascii() and version.isdigit() and len(version) <= 19):
            continue
        if int(log) >= best.log:
            best = Cursor(min(int(log), MAX_ID), min(int(version), MAX_ID))
    return best


@dataclass
class Target:
    """Whose stream of what: a tournament's or a room's table, for one player."""

    stream_id: str
    table_id: str
    tournament_id: str | None
    viewer: str
    seated: bool = False
    """The stream was a seated player's: its end is recorded as a drop (the disconnect
    grace, docs/rooms.md)."""
    bound_for: str | None = None
    """An MTT's player in transit: the table they are moving to, where a drop meanwhile is
    recorded too (that table's decision timer reads it once they sit there)."""
    advised: bool = False
    """A copilot tournament's or room's: the player's turns may carry their advisor's
    ``advice`` (docs/copilot.md)."""

    @property
    def table(self) -> TableRef:
        if self.tournament_id is None:
            return TableRef.room(self.stream_id)
        return TableRef.tournament(self.tournament_id)


Message = tuple[str, str, dict[str, Any] | bytes]
"""(id, event type, data): a game state's data is its JSON body as the read model rendered
it (``GameStateCache.render``, shared with the HTTP route), sent as it is."""


def frame(id_: str, event: str, data: bytes) -> str:
    """A WebSocket frame ``{"id", "event", "data"}`` around a body already JSON, the very text
    ``send_json`` writes for it (which leaves non-ASCII characters unescaped: a body that
    escaped one is written again that way).

    >>> frame("3-7", "game_state", b'{"a":[1,"x"]}')
    '{"id":"3-7","event":"game_state","data":{"a":[1,"x"]}}'
    >>> frame("3-7", "game_state", json.dumps({"name": "Zoë"}).encode())
    '{"id":"3-7","event":"game_state","data":{"name":"Zoë"}}'
    """
    text = data.decode()
    if "\\u" in text:
        text = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    head = json.dumps({"id": id_, "event": event}, separators=(",", ":"), ensure_ascii=False)
    return f'{head[:-1]},"data":{text}}}'


async def player_messages(
    app_state: AppState,
    target: Target,
    cursor: Cursor,
    disconnected: Callable[[], Awaitable[bool]],
    credential: StreamCredential | None = None,
) -> AsyncIterator[Message]:
    """The player's messages from ``cursor`` on, until the stream's final event. With a
    ``credential``, it is checked again before each private message and at every idle tick:
    one that no longer holds raises ``unauthorized`` (security review N6)."""
    db = app_state.db
    cache = app_state.read_model
    # (table, hand, turn): an MTT's tables number their hands each on their own, so a moved
    # player's turn at the new table can have the old table's numbers (security review 3, S8).
    sent_turn: tuple[str, int, int] | None = None
    my_turn: tuple[str, int, int] | None = None
    """The player's turn the last game state sent shows (None: not theirs)."""
    advised_turn: tuple[str, int, int] | None = None
    """The turn whose advice was sent."""
    sent_hand: tuple[str | None, int] | None = None
    """The (table, hand) of the last game state sent while that hand ran."""
    changed_seen = False
    """The last wait ended on a change of the table's state (not an idle tick)."""
    playing = target.tournament_id is None

    async def state() -> Rendered | None:
        nonlocal playing
        if not playing:  # before a tournament's table exists there is no game state to push
            async with db.session() as session:
                row = await session.get(Tournament, target.tournament_id)
            if row is None or row.state in PRE_PLAY:
                return None
            playing = True
        try:
            if target.tournament_id is None:
                return await cache.render(None, target.table_id, target.viewer)
            # A multi-table tournament's player is followed to the table that seats them now
            # (in transit: the coded state, and the stream wakes with the old table's change).
            placed = await placed_state(app_state, target.tournament_id, target.viewer)
            if placed.table_id is not None:
                target.table_id = placed.table_id
            target.bound_for = placed.bound_for
            return placed.rendered
        except NoPublishedState:
            return None
        except ApiError as err:
            if err.code != ErrorCode.TEMPORARILY_UNAVAILABLE:
                raise
            return None  # e.g. an agent's card key unreadable for a moment: the next tick

    async def still_valid() -> list[Message]:
        """Check the credential (raises once it no longer holds); an agent's Agent Card
        change since the last check is a message of its own."""
        if credential is None:
            return []
        await credential.check()
        card = credential.card_change()
        return [(cursor.id, "agent_card_changed", card)] if card is not None else []

    def game_state_messages(rendered: Rendered) -> list[Message]:
        nonlocal sent_turn, my_turn, sent_hand
        cursor.version = rendered.version
        out: list[Message] = [(cursor.id, "game_state", rendered.body)]
        state = rendered.state
        running = state.hand is not None and not state.hand.over
        sent_hand = (state.table_id, state.hand_number) if running else None
        required = action_required(state)
        turn = (state.table_id or "", state.hand_number, state.turn or 0)
        my_turn = turn if required is not None else None
        if required is not None and turn != sent_turn:
            sent_turn = turn
            out.append((cursor.id, "action_required", required.to_wire()))
        return out

    async def advice_messages() -> list[Message]:
        """The advisor's advice for the player's current turn, once per turn, after its
        ``action_required`` (a reconnected stream sends it again): read from PostgreSQL at
        each pass, so an advice any replica accepted arrives within ``POLL_SECONDS``."""
        nonlocal advised_turn
        if not target.advised or my_turn is None or my_turn == advised_turn:
            return []
        table_id, hand_number, turn = my_turn
        found = await advice.for_turn(
            db, target.stream_id, table_id, target.viewer, hand_number, turn
        )
        if found is None:
            return []
        advised_turn = my_turn
        return [(cursor.id, "advice", Advice.model_validate(found).to_wire())]

    def mid_hand(rendered: Rendered) -> bool:
        """A newer state of the same running hand as the last one sent: nothing the log can
        hold is due before it (a hand's result follows its end, and this hand runs on), so
        it goes out before the log is read; a turn reaches its player without waiting for
        that read (issue 30: the stream's turn trailed the long-poll's by that read)."""
        state = rendered.state
        return (
            rendered.version != cursor.version
            and state.hand is not None
            and not state.hand.over
            and sent_hand == (state.table_id, state.hand_number)
        )

    while True:
        for message in await still_valid():
            yield message
        if changed_seen and sent_hand is not None:
            early = await state()
            if early is not None and mid_hand(early):
                for message in game_state_messages(early):
                    yield message
        rows = await read_page(db, target.stream_id, cursor.log, PAGE)
        for row in rows:
            assert row.id is not None
            after: list[Message] = []
            if row.type == "hand_result":
                # The hand's state was stored before its result was logged: read the store
                # now, so the state injected here is at least that new. The result follows
                # the state at once; a turn in the next hand is asked for after the result.
                await cache.refresh(target.table_id)
                body = await state()
                if body is not None:
                    fresh = [*await still_valid(), *game_state_messages(body)]
                    after = [m for m in fresh if m[1] == "action_required"]
                    for message in fresh:
                        if message[1] != "action_required":
                            yield message
            cursor.log = row.id
            if target.tournament_id is None:  # a room's events number seats from 1
                yield cursor.id, row.type, room_event_on_wire(row.type, row.payload)
            else:
                yield cursor.id, row.type, row.payload
            for _, kind, data in after:
                yield cursor.id, kind, data
            if is_final(row.type, row.payload):
                return
        # The change a wait below must not miss: one installed while this pass renders and
        # sends (its ``changed`` is replaced then) wakes the wait at once, not after
        # ``POLL_SECONDS``.
        before = cache.snapshot(target.table_id)
        changed = before.changed if before is not None else None
        body = await state()
        # On (re)connecting the current state always goes out once, so a resumed client that
        # missed nothing still learns it is its turn.
        if body is not None and (body.version != cursor.version or sent_turn is None):
            you = body.state.you
            if body.version != cursor.version or (you is not None and you.to_act):
                for message in [*await still_valid(), *game_state_messages(body)]:
                    yield message
        for message in await advice_messages():
            yield message
        if len(rows) < PAGE:
            if await disconnected():
                return
            you = body.state.you if body is not None else None
            seated = you is not None and you.seat is not None
            if target.tournament_id is None:
                # A room player with an open stream is connected: the disconnect grace
                # (docs/rooms.md) reads this, as it reads polls and actions.
                await touch(db, target.stream_id, target.viewer, seated=seated)
            if seated:
                # A seated player's stream is open (a reconnect ends a drop's grace); its
                # end is recorded by the stream's owner (``stream_ended``).
                target.seated = True
                await stream_open(db, target.table_id, target.viewer)
            watch = cache.snapshot(target.table_id)
            changed_seen = False
            if watch is None:
                await asyncio.sleep(POLL_SECONDS)
            else:
                # The same table as before the render: wait on the change seen then (a move
                # to another table waits on that table's next one).
                event = changed if watch is before and changed is not None else watch.changed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), POLL_SECONDS)
                changed_seen = event.is_set()
        else:
            changed_seen = False


async def stream_ended(app_state: AppState, target: Target) -> None:
    """A seated player's stream closed: the table's disconnect grace runs from now
    (``stream_presence``, read by the table when the player's decision timer runs out). A
    player in transit between an MTT's tables has it recorded at the table they are moving
    to as well: that is the table whose timer will read it. A failure to record it is
    logged, never the client's error."""
    if not target.seated:
        return
    try:
        with anyio.fail_after(5):
            await stream_dropped(app_state.db, target.table_id, target.viewer)
            if target.bound_for is not None and target.bound_for != target.table_id:
                await stream_dropped(app_state.db, target.bound_for, target.viewer)
    except Exception:
        log.warning("could not record the end of %s's stream", target.viewer, exc_info=True)


async def _sse(request: Request, target: Target, cursor: Cursor) -> Response:
    if cursor.log > 0 and await ended_by(state_of(request.app).db, target.stream_id, cursor.log):
        return Response(status_code=204)  # resumed after the final event: the stream is over
    slots: StreamSlots = state_of(request.app).stream_slots
    release = slots.acquire(request)
    credential = StreamCredential(request, target.viewer)

    async def stream() -> AsyncIterator[ServerSentEvent]:
        try:
            async for id_, type_, data in player_messages(
                state_of(request.app), target, cursor, request.is_disconnected, credential
            ):
                text = (
                    data.decode()
                    if isinstance(data, bytes)
                    else json.dumps(data, separators=(",", ":"))
                )
                yield ServerSentEvent(data=text, event=type_, id=id_)
        except ApiError as err:
            if err.code is not ErrorCode.UNAUTHORIZED:
                raise
            # The credential expired or was revoked: say so, and the stream ends (N6).
            error = stream_error(err.code.value, err.message)["data"]
            yield ServerSentEvent(data=json.dumps(error, separators=(",", ":")), event="error")
        finally:
            release()
            # Shielded: the client's going away cancels this stream (docs/rooms.md).
            with anyio.CancelScope(shield=True):
                await stream_ended(state_of(request.app), target)

    return EventSourceResponse(stream(), ping=PING_SECONDS, background=BackgroundTask(release))


AfterCursor = Annotated[str | None, Query(max_length=40, description="resume after this id")]
LastEventId = Annotated[str | None, Header(max_length=40)]


async def _tournament_target(app_state: AppState, tournament_id: str, viewer: str) -> Target:
    if not VALID_ID.fullmatch(tournament_id):  # HTTP checks it in the path; a socket here
        raise ApiError(ErrorCode.NOT_FOUND, "no such tournament")
    async with app_state.db.session() as session:
        row = await session.get(Tournament, tournament_id)
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "no such tournament")
    return Target(
        tournament_id,
        table_workflow_id(tournament_id),
        tournament_id,
        viewer,
        advised=row.kind == "copilot",
    )


async def _room_target(app_state: AppState, room_id: str, viewer: str) -> Target:
    if not VALID_ID.fullmatch(room_id):
        raise ApiError(ErrorCode.NOT_FOUND, "no such room")
    async with app_state.db.session() as session:
        row = await session.get(Room, room_id)
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "no such room")
    return Target(room_id, room_workflow_id(room_id), None, viewer, advised=row.kind == "copilot")


SSE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "the player's stream"},
    204: {"description": "resumed after the final event: the stream has ended"},
}


@router.get(
    "/tournaments/{tournament_id}/me/stream",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def tournament_player_stream(
    tournament_id: TournamentId,
    request: Request,
    caller: CurrentPlayer,
    after: AfterCursor = None,
    last_event_id: LastEventId = None,
) -> Response:
    """Your own stream of a tournament: the public events, your game state whenever it
    changes, and ``action_required`` on your turn (docs/events.md)."""
    target = await _tournament_target(state_of(request.app), tournament_id, caller.user_id)
    return await _sse(request, target, parse_cursor(after, last_event_id))


@router.get(
    "/rooms/{room_id}/me/stream", response_class=EventSourceResponse, responses=SSE_RESPONSES
)
async def room_player_stream(
    room_id: RoomId,
    request: Request,
    caller: CurrentPlayer,
    after: AfterCursor = None,
    last_event_id: LastEventId = None,
) -> Response:
    """Your own stream of a room: its events, your game state, ``action_required``."""
    target = await _room_target(state_of(request.app), room_id, caller.user_id)
    return await _sse(request, target, parse_cursor(after, last_event_id))


# -- WebSocket ---------------------------------------------------------------------------------
@router.get(
    "/asyncapi.json",
    response_model=dict[str, Any],
    summary="The WebSocket protocol's AsyncAPI document",
    response_description="An AsyncAPI 3.0 document: both sockets' messages, either way",
)
async def asyncapi(request: Request) -> JSONResponse:
    """Every message of the per-player WebSockets (``/tournaments/{id}/me/ws``,
    ``/rooms/{id}/me/ws``), as JSON Schemas generated from the models the server sends and
    parses (api/ws_protocol.py). Public and the same for every caller until the service is
    upgraded: cacheable."""
    return JSONResponse(
        _asyncapi(request.app.version), headers={"Cache-Control": "public, max-age=3600"}
    )


@functools.cache
def _asyncapi(version: str) -> dict[str, Any]:
    return asyncapi_document(version)


async def _serve_ws(
    websocket: WebSocket, resolve: Callable[[Caller], Awaitable[Target]], after: str | None
) -> None:
    # Accepted first, so a refusal reaches the client as its close code (before accepting,
    # a close is an HTTP 403 whatever the code).
    await websocket.accept()
    try:
        caller = await ws_caller(websocket)
        target = await resolve(caller)
    except (ApiError, DomainError) as err:
        await websocket.close(
            code=WS_CLOSE_CODES.get(err.code, 4404),
            reason=f"{err.code.value}: {err.message}"[:120],
        )
        return
    slots: StreamSlots = state_of(websocket.app).stream_slots
    try:
        release = slots.acquire(websocket)  # the verified caller's and its address's slot
    except ApiError as err:
        await websocket.close(code=4429, reason=err.code.value)
        return
    closed = asyncio.Event()
    credential = StreamCredential(websocket, target.viewer)
    outbox = Outbox()  # the newest game state and a few other messages (api/streams.py)

    async def disconnected() -> bool:
        return closed.is_set()

    async def pump() -> None:
        try:
            async for id_, type_, data in player_messages(
                state_of(websocket.app), target, parse_cursor(after), disconnected, credential
            ):
                await outbox.put({"id": id_, "event": type_, "data": data})
        except ApiError as err:
            if err.code is not ErrorCode.UNAUTHORIZED:
                raise
            await outbox.put({CLOSE: f"{err.code.value}: {err.message}"[:120]})
            return
        await outbox.put({"event": "end"})

    async def send() -> None:
        while True:
            message = await outbox.get()
            reason = message.get(CLOSE)
            if reason is None and message.get("event") in PRIVATE:
                try:
                    await credential.check()  # it may have waited in the queue (N6)
                except ApiError as err:
                    if err.code is not ErrorCode.UNAUTHORIZED:
                        raise
                    reason = f"{err.code.value}: {err.message}"[:120]
            if reason is not None:
                # The credential expired or was revoked: the socket closes with 4401.
                await websocket.close(code=4401, reason=reason)
                return
            data = message.get("data")
            if isinstance(data, bytes):  # a game state's body, already JSON
                await websocket.send_text(frame(message["id"], message["event"], data))
            else:
                await websocket.send_json(message)
            if message.get("event") == "end":
                await websocket.close()
                return

    async def receive() -> None:
        while True:
            raw = await websocket.receive_text()
            reply = await _ws_request(websocket, target, raw)
            await outbox.put(reply)

    try:
        stalled = await run_socket(send(), pump(), receive())
    finally:
        closed.set()
        release()
        await stream_ended(state_of(websocket.app), target)
    if stalled:  # the client read nothing while its outbox stayed full: free what it holds
        with contextlib.suppress(Exception):
            await asyncio.wait_for(websocket.close(code=1008, reason="too_slow"), 5)


PRIVATE = frozenset({"game_state", "action_required", "advice"})
"""The messages that carry the player's private data: the credential is checked right
before each goes out."""
CLOSE = "close"
"""An outbox entry that is no message: the stream's credential ended, close the socket."""


async def _ws_request(websocket: WebSocket, target: Target, raw: str) -> dict[str, Any]:
    request_id: Any = None
    try:
        message = json.loads(raw)
        if not isinstance(message, dict):
            raise ApiError(ErrorCode.VALIDATION_ERROR, "a message is a JSON object")
        request_id = message.get("requestId")
        kind = message.get("type")
        model = CLIENT_MESSAGES.get(kind) if isinstance(kind, str) else None
        if model is None:
            raise ApiError(
                ErrorCode.VALIDATION_ERROR, "a request is type 'act' or 'seed'", field="type"
            )
        request = model.model_validate(message)  # the schema's own model (api/ws_protocol.py)
        if isinstance(request, SeedRequest):
            reply = await _ws_seed(websocket, target, request)
        else:
            reply = await _ws_act(websocket, target, request)
    except json.JSONDecodeError:
        reply = stream_error(ErrorCode.VALIDATION_ERROR.value, "not JSON")
    except ValidationError as err:
        first = err.errors()[0]
        reply = stream_error(
            ErrorCode.VALIDATION_ERROR.value, first["msg"], ".".join(str(p) for p in first["loc"])
        )
    except Exception as err:  # a coded refusal (ours or the table's), or the service's trouble
        reply = stream_error(*refusal_of(err))
    if request_id is not None:
        reply["requestId"] = request_id
    return reply


async def _ws_caller_again(websocket: WebSocket, target: Target) -> Caller:
    """The credential is checked again for each request: one that expired or was revoked
    while the socket stayed open acts no more."""
    caller = await ws_caller(websocket)
    if caller.user_id != target.viewer:
        raise ApiError(ErrorCode.UNAUTHORIZED, "the credential changed")
    return caller


async def _ws_seed(websocket: WebSocket, target: Target, body: SeedRequest) -> dict[str, Any]:
    caller = await _ws_caller_again(websocket, target)
    taken = await play.seed(state_of(websocket.app), target.table, caller.user_id, body)
    return {"event": "seed_result", "data": taken.model_dump(by_alias=True)}


async def _ws_act(websocket: WebSocket, target: Target, body: ActRequest) -> dict[str, Any]:
    caller = await _ws_caller_again(websocket, target)
    result = await play.act(
        state_of(websocket.app), target.table, caller.user_id, body, body.idempotency_key
    )
    return {"event": "act_result", "data": result.model_dump(by_alias=True)}


@router.websocket("/tournaments/{tournament_id}/me/ws")
async def tournament_player_ws(
    websocket: WebSocket, tournament_id: str, after: str | None = None
) -> None:
    """Your stream of a tournament over a WebSocket, on which you can also act."""

    async def resolve(caller: Caller) -> Target:
        return await _tournament_target(state_of(websocket.app), tournament_id, caller.user_id)

    await _serve_ws(websocket, resolve, after)


@router.websocket("/rooms/{room_id}/me/ws")
async def room_player_ws(websocket: WebSocket, room_id: str, after: str | None = None) -> None:
    """Your stream of a room over a WebSocket, on which you can also act."""

    async def resolve(caller: Caller) -> Target:
        return await _room_target(state_of(websocket.app), room_id, caller.user_id)

    await _serve_ws(websocket, resolve, after)
