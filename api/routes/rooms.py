"""Cash rooms: the room records, creating and closing, joining and leaving, and playing.

A room is a RoomWorkflow (``room-<hex>``, workflows/room.py). The work is the rooms and play
services' (api/services/rooms.py, api/services/play.py). Listing and reading rooms serve the
read model (``rooms``) and never query a workflow; the game state is the tournaments' shape
without the tournament fields, served from the same read model (``GameStateCache``).
Anyone may watch: without a credential the game state is the spectator's (no hole cards).
Each authenticated poll or action also records presence, which the room reads for the
disconnect grace, and each anonymous poll or open stream counts as an observer.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import JSONResponse

from api.auth import CurrentPlayer, MaybePlayer, ServiceKey
from api.deps import DbDep, IdempotencyKey, PageLimit, RoomId
from api.presence import anonymous, touch
from api.read_model import LongPollDep
from api.services import play, rooms
from api.services.play import ActBody, SeedBody, TableRef
from api.services.rooms import CreateRoomBody, JoinBody, RoomRecord, Status
from api.state import AppStateDep
from api.stream_auth import StreamCredential
from wire.game_state import GameState
from wire.table_messages import ActResult, CloseRoomResult, JoinResult, RoomLeaveResult, SeedResult

router = APIRouter(prefix="/rooms", tags=["rooms"])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=RoomRecord,
    response_model_by_alias=True,
    dependencies=[ServiceKey],
)
async def create_room(body: CreateRoomBody, state: AppStateDep) -> RoomRecord:
    """Open a room (operators: ``X-Service-Key``). It waits for two players, then deals."""
    return rooms.record(await rooms.start(state, body), 0, {})


@router.get("", response_model=list[RoomRecord], response_model_by_alias=True)
async def list_rooms(
    db: DbDep,
    status_: Annotated[Status | None, Query(alias="status")] = None,
    limit: PageLimit = 100,
) -> list[RoomRecord]:
    """Rooms, newest first (closed ones only when asked for by ``status``)."""
    return await rooms.list_rooms(db, status_, limit)


@router.get("/{room_id}", response_model=RoomRecord, response_model_by_alias=True)
async def get_room(room_id: RoomId, db: DbDep) -> RoomRecord:
    return await rooms.get(db, room_id)


@router.post(
    "/{room_id}/close",
    response_model=CloseRoomResult,
    response_model_by_alias=True,
    dependencies=[ServiceKey],
)
async def close_room(room_id: RoomId, state: AppStateDep) -> CloseRoomResult:
    """Close a room (operators): the running hand finishes, then every stack goes home."""
    return await rooms.close(state, room_id)


@router.post("/{room_id}/join", response_model=JoinResult, response_model_by_alias=True)
async def join_room(
    room_id: RoomId,
    caller: CurrentPlayer,
    state: AppStateDep,
    body: JoinBody | None = None,
) -> JoinResult:
    """Take a seat: the room's fixed entry is reserved from your balance and becomes your
    stack. Joining mid-hand seats you for the next hand. Joining again answers the same seat.
    A ``copilot`` room needs ``advisorAgentId`` (docs/copilot.md)."""
    return await rooms.join(state, room_id, caller, body)


@router.post(
    "/{room_id}/leave",
    response_model=RoomLeaveResult,
    response_model_by_alias=True,
    responses={202: {"model": RoomLeaveResult, "description": "you leave when this hand ends"}},
)
async def leave_room(
    room_id: RoomId, caller: CurrentPlayer, state: AppStateDep
) -> RoomLeaveResult | JSONResponse:
    """Stand up: your remaining stack returns to your balance
    (``{"returned": N, "currency": "virtual_chips"}``). During a hand you are in, the answer is
    202 with ``pending``: you check or fold from now on and leave when the hand ends."""
    return await rooms.leave(state, room_id, caller.user_id)


@router.post("/{room_id}/seed", response_model=SeedResult, response_model_by_alias=True)
async def room_seed(
    room_id: RoomId, body: SeedBody, state: AppStateDep, caller: CurrentPlayer
) -> SeedResult:
    """Send a seed for the next hand before it is dealt (docs/fairness.md); as at a
    tournament's table."""
    await rooms.room_row(state.db, room_id)
    return await play.seed(state, TableRef.room(room_id), caller.user_id, body)


@router.post("/{room_id}/sit-in", response_model=ActResult, response_model_by_alias=True)
async def sit_in(room_id: RoomId, caller: CurrentPlayer, state: AppStateDep) -> ActResult:
    """Come back after sitting out (timeouts): dealt in again from the next hand."""
    await rooms.room_row(state.db, room_id)
    return await play.sit_in(state, TableRef.room(room_id), caller.user_id)


# -- play ------------------------------------------------------------------------------------
@router.get("/{room_id}/game-state", response_model=None, responses={200: {"model": GameState}})
async def room_game_state(
    room_id: RoomId,
    request: Request,
    caller: MaybePlayer,
    state: AppStateDep,
    poll: LongPollDep,
) -> dict[str, Any]:
    """The tournaments' game-state shape without the tournament fields, plus ``room``. With a
    credential you see your own hole cards and legal actions; without one, public play only.
    ``waitForChange=<version>`` long-polls."""
    viewer = caller.user_id if caller else None
    credential = StreamCredential(request, viewer) if viewer is not None else None
    rendered = await play.room_game_state(
        state, room_id, viewer, poll.wait_for_change, poll.wait_seconds, credential
    )
    you = rendered.state.you
    seated = you is not None and you.seat is not None
    await touch(state.db, room_id, viewer or anonymous(request), seated=seated)
    return Response(rendered.body, media_type="application/json")  # type: ignore[return-value]


@router.post("/{room_id}/action", response_model=ActResult, response_model_by_alias=True)
async def room_action(
    room_id: RoomId,
    body: ActBody,
    state: AppStateDep,
    caller: CurrentPlayer,
    idempotency_key: IdempotencyKey = None,
) -> ActResult:
    """Act on your turn: ``handNumber`` and ``turn`` from the state you answer. A retry (the
    same hand, turn, action and amount, or the same ``Idempotency-Key``) gets the first
    answer; the answer's ``version`` is the game state's."""
    return await play.act(state, TableRef.room(room_id), caller.user_id, body, idempotency_key)
