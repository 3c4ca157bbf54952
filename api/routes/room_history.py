"""A cash room's past and present for anyone: its finished hands and its event stream."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlmodel import select

from api.auth import MaybePlayer
from api.deps import DbDep, HandNumber, HandPageDep, PageLimit
from api.errors import ApiError
from api.hand_records import served_record
from api.presence import anonymous, touch
from api.routes.events import AfterQuery, EventPage, page, resume_point, sse
from api.routes.hands import NEXT_PAGE, finished_hands, link_next
from api.routes.rooms import RoomId, room_row
from db.models import Hand
from domain.errors import ErrorCode
from wire.game_state import HandRecord
from wire.ids import room_workflow_id
from wire.messages import WireModel

router = APIRouter(prefix="/rooms", tags=["rooms"])


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
                winners=sorted({int(w) for p in h.record["pots"] for w in p["winners"]}),
                gross_pot=settlement.get("grossPot", 0),
                net_to_winner=settlement.get("netToWinner", {}),
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
        hand.record, caller.user_id if caller else None, request.app.state.game_states.codec
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
    hand_result, player_join, player_leave and room_status. Public (no hole cards); resume
    with ``Last-Event-ID`` or ``?after=``. An open stream counts as an observer."""
    await room_row(db, room_id)
    viewer = anonymous(request)  # the same client's streams count once

    async def watching() -> None:
        await touch(db, room_id, viewer, seated=False)

    await watching()
    cursor = resume_point(after, request.headers.get("last-event-id"))
    return await sse(db, room_id, request, cursor, on_idle=watching)


@router.get("/{room_id}/events.json", response_model=EventPage, response_model_by_alias=True)
async def room_events(
    room_id: RoomId,
    db: DbDep,
    after: AfterQuery = None,
    limit: PageLimit = 100,
) -> EventPage:
    """One page of the room stream after an id, for clients that cannot read SSE."""
    await room_row(db, room_id)
    return await page(db, room_id, after or 0, limit)
