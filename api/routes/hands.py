"""Hand histories after each hand, as JSON and as PHH (the uoftcprg standard).

A finished hand's record is public as far as the rules show it: the board and the hands shown
down, each card with its opening against the deck's root (docs/fairness.md); a player also
reads their own cards. Running hands are never served here.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from sqlmodel import col, select

from api.auth import MaybePlayer
from api.deps import DbDep, HandNumber, HandPageDep, TournamentId
from api.errors import ApiError
from api.hand_records import NEXT_PAGE, finished_hands, link_next, served_phh, served_record
from api.state import state_of
from core.codec import EncryptionCodec
from db.models import Hand, Tournament
from domain.errors import ErrorCode
from wire.game_state import HandRecord
from wire.messages import WireModel

router = APIRouter(prefix="/tournaments", tags=["hands"])


class HandSummary(WireModel):
    hand_number: int
    table_id: str
    level: int
    board: list[str]
    winners: list[int]


def _summary(hand: Hand) -> HandSummary:
    pots = hand.record.get("pots", [])
    winners = sorted({int(w) for pot in pots for w in pot.get("winners", [])})
    return HandSummary(
        hand_number=hand.hand_no,
        table_id=hand.table_id,
        level=hand.level,
        board=list(hand.record.get("board", [])),
        winners=winners,
    )


async def _hand(db: DbDep, tournament_id: str, hand_number: int) -> Hand:
    async with db.session() as session:
        hand = (
            await session.exec(
                select(Hand).where(
                    Hand.tournament_id == tournament_id,
                    Hand.hand_no == hand_number,
                    col(Hand.hand_no) > 0,
                )
            )
        ).first()
    if hand is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"no finished hand {hand_number} in {tournament_id}")
    return hand


@router.get(
    "/{tournament_id}/hands",
    response_model=list[HandSummary],
    response_model_by_alias=True,
    responses=NEXT_PAGE,
)
async def list_hands(
    tournament_id: TournamentId,
    db: DbDep,
    page: HandPageDep,
    request: Request,
    response: Response,
) -> list[HandSummary]:
    """The tournament's finished hands in hand order, a page at a time: ``after`` the last
    hand number read (0, the default, for the first page), ``limit`` 1..500 (100). While more
    follow, ``Link: <…?after=N&limit=L>; rel="next"``; the last page has no ``Link``."""
    async with db.session() as session:
        if await session.get(Tournament, tournament_id) is None:
            raise ApiError(ErrorCode.NOT_FOUND, f"no such tournament: {tournament_id}")
    hands = await finished_hands(db, Hand.tournament_id == tournament_id, page)
    link_next(request, response, page, hands)
    return [_summary(h) for h in hands.hands]


@router.get(
    "/{tournament_id}/hands/{hand_number}",
    response_model=None,
    responses={200: {"model": HandRecord}},
)
async def hand_history(
    tournament_id: TournamentId,
    hand_number: HandNumber,
    db: DbDep,
    request: Request,
    caller: MaybePlayer,
) -> dict[str, Any]:
    """The record: seats and players, forced bets, actions, the board, the hands shown down,
    pots and winners, stacks before and after, busts, and the deck evidence (the root, the
    players' seeds, the openings of every revealed card; docs/fairness.md). With a credential,
    a player of the hand also gets their own cards (``yourCards``). Folded and mucked hands
    are nobody's to read."""
    record = (await _hand(db, tournament_id, hand_number)).record
    return served_record(record, caller.user_id if caller else None, _codec(request))


@router.get("/{tournament_id}/hands/{hand_number}/phh", response_class=PlainTextResponse)
async def hand_history_phh(
    tournament_id: TournamentId,
    hand_number: HandNumber,
    db: DbDep,
    request: Request,
    caller: MaybePlayer,
) -> str:
    """The hand in PHH; hands not shown down are ``????`` (your own are yours to read)."""
    record = (await _hand(db, tournament_id, hand_number)).record
    return served_phh(record, caller.user_id if caller else None, _codec(request))


def _codec(request: Request) -> EncryptionCodec:
    codec: EncryptionCodec = state_of(request.app).read_model.codec
    return codec
