"""A cash room's past and present for anyone: its finished hands and its event stream.

The stream (``/rooms/{id}/stream``) answers Server-Sent Events and, on the same path, a
WebSocket (seed 004: ``ws://…/rooms/{id}/stream``). Both serve the room's log with every seat
numbered from 1 (``wire.events.room_event_on_wire``), need no credential (the log is public:
no hole cards but those shown down), count as an observer, take a stream slot
(``api/streams.py``), and end after the room's ``room_status`` ``closed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from fastapi import APIRouter, Request, Response, WebSocket
from sqlmodel import select

from api.auth import MaybePlayer
from api.deps import ID_PATTERN, DbDep, HandNumber, HandPageDep, PageLimit, RoomId
from api.errors import ApiError
from api.event_log import (
    PAGE,
    POLL_SECONDS,
    AfterQuery,
    EventPage,
    ended_by,
    is_final,
    page,
    read_page,
    resume_point,
    sse,
)
from api.hand_records import NEXT_PAGE, finished_hands, link_next, served_record
from api.presence import anonymous, touch
from api.services.rooms import room_row, wire_seat
from api.state import state_of
from api.streams import Outbox, StreamSlots, run_socket
from db.models import Hand, Room
from domain.errors import ErrorCode
from wire.events import room_event_on_wire
from wire.game_state import HandRecord
from wire.ids import room_workflow_id
from wire.messages import WireModel

router = APIRouter(prefix="/rooms", tags=["rooms"])
VALID_ID = re.compile(ID_PATTERN)


class RoomHandSummary(WireModel):
    hand_number: int
    board: list[str]
    winners: list[int]
    gross_pot: int
    net_to_winner: dict[str, int]


@router.get(
    "/{room_id}/hands",
    response_model=list[RoomHandSummary],
    response_model_by_alias=True,
    responses=NEXT_PAGE,
)
async def list_room_hands(
    room_id: RoomId, db: DbDep, page: HandPageDep, request: Request, response: Response
) -> list[RoomHandSummary]:
    """The room's finished hands in hand order, paged as a tournament's: ``after`` the last
    hand number read, ``limit`` 1..500 (100), and ``Link: <…>; rel="next"`` while more
    follow."""
    await room_row(db, room_id)
    hands = await finished_hands(db, Hand.table_id == room_workflow_id(room_id), page)
    link_next(request, response, page, hands)
    out = []
    for h in hands.hands:
        settlement = h.record.get("settlement", {})
        out.append(
            RoomHandSummary(
                hand_number=h.hand_no,
                board=list(h.record.get("board", [])),
                winners=sorted({wire_seat(int(w)) for p in h.record["pots"] for w in p["winners"]}),
                gross_pot=settlement.get("grossPot", 0),
                net_to_winner={
                    str(wire_seat(int(seat))): chips
                    for seat, chips in settlement.get("netToWinner", {}).items()
                },
            )
        )
    return out


@router.get(
    "/{room_id}/hands/{hand_number}", response_model=None, responses={200: {"model": HandRecord}}
)
async def room_hand(
    room_id: RoomId,
    hand_number: HandNumber,
    db: DbDep,
    request: Request,
    caller: MaybePlayer,
) -> dict[str, Any]:
    """A finished hand's record with its settlement: the board and the hands shown down with
    their openings, and, for a player of the hand, their own cards (``yourCards``); as at a
    tournament (docs/fairness.md)."""
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
    return served_record(
        hand.record, caller.user_id if caller else None, state_of(request.app).read_model.codec
    )


@router.get(
    "/{room_id}/stream",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "the room stream"},
        204: {"description": "resumed after the room closed: the stream has ended"},
    },
)
async def room_stream(
    room_id: RoomId,
    request: Request,
    db: DbDep,
    after: AfterQuery = None,
) -> Any:
    """Server-Sent Events: hand_start, action, community_cards, pot_update, showdown,
    hand_result, player_join, player_leave and room_status, seats numbered from 1. Public (no
    hole cards); resume with ``Last-Event-ID`` or ``?after=``. An open stream counts as an
    observer. The same path answers a WebSocket with the same events."""
    await room_row(db, room_id)
    viewer = anonymous(request)  # the same client's streams count once

    async def watching() -> None:
        await touch(db, room_id, viewer, seated=False)

    await watching()
    cursor = resume_point(after, request.headers.get("last-event-id"))
    return await sse(db, room_id, request, cursor, on_idle=watching, shape=room_event_on_wire)


@router.get("/{room_id}/events.json", response_model=EventPage, response_model_by_alias=True)
async def room_events(
    room_id: RoomId,
    db: DbDep,
    after: AfterQuery = None,
    limit: PageLimit = 100,
) -> EventPage:
    """One page of the room stream after an id, for clients that cannot read SSE."""
    await room_row(db, room_id)
    return await page(db, room_id, after or 0, limit, shape=room_event_on_wire)


@router.websocket("/{room_id}/stream")
async def room_stream_socket(websocket: WebSocket, room_id: str, after: str | None = None) -> None:
    """The room stream over a WebSocket: each event is ``{"id", "event", "data"}`` (the SSE
    event's id, name and data), and ``{"event": "end"}`` follows the room's closing before the
    socket closes. Resume with ``?after=<id>``. The socket takes no requests: a message sent
    on it is answered with an ``error`` (``validation_error``). A refused handshake closes
    with 4404 (no such room) or 4429 (too many streams); a client that reads nothing is
    closed with 1008 (``api/streams.py``)."""
    # Accepted first, so a refusal reaches the client as its close code.
    await websocket.accept()
    db = state_of(websocket.app).db
    async with db.session() as session:
        known = VALID_ID.fullmatch(room_id) and await session.get(Room, room_id) is not None
    if not known:
        await websocket.close(code=4404, reason="not_found: no such room")
        return
    cursor = resume_point(None, after)
    if cursor > 0 and await ended_by(db, room_id, cursor):
        await websocket.send_json({"event": "end"})  # resumed after the room closed
        await websocket.close()
        return
    slots: StreamSlots = state_of(websocket.app).stream_slots
    try:
        release = slots.acquire(websocket)
    except ApiError as err:
        await websocket.close(code=4429, reason=err.code.value)
        return
    viewer = anonymous(websocket)  # the same client's streams count once
    outbox = Outbox()

    async def pump() -> None:
        nonlocal cursor
        while True:
            rows = await read_page(db, room_id, cursor, PAGE)
            for row in rows:
                assert row.id is not None
                cursor = row.id
                data = room_event_on_wire(row.type, row.payload)
                await outbox.put({"id": str(row.id), "event": row.type, "data": data})
                if is_final(row.type, row.payload):
                    await outbox.put({"event": "end"})
                    return
            if len(rows) < PAGE:
                await touch(db, room_id, viewer, seated=False)
                await asyncio.sleep(POLL_SECONDS)

    async def send() -> None:
        while True:
            message = await outbox.get()
            await websocket.send_json(message)
            if message["event"] == "end":
                await websocket.close()
                return

    async def receive() -> None:
        while True:
            await websocket.receive_text()
            await outbox.put(
                {
                    "event": "error",
                    "data": {
                        "code": ErrorCode.VALIDATION_ERROR.value,
                        "message": "the room stream takes no requests (play on /rooms/{id}/me/ws)",
                    },
                }
            )

    await touch(db, room_id, viewer, seated=False)
    try:
        stalled = await run_socket(send(), pump(), receive())
    finally:
        release()
    if stalled:  # the client read nothing while its outbox stayed full: free what it holds
        with contextlib.suppress(Exception):
            await asyncio.wait_for(websocket.close(code=1008, reason="too_slow"), 5)
