"""A finished hand's record as one reader may see it (docs/fairness.md): tournaments and
rooms alike.

Everyone gets the public record: the board and the hands shown down, with their openings
against the deck's root, and the record's link in its table's hash chain. A reader who played
the hand also gets their own hole cards (``yourCards``, with their openings, from the seat's
sealed private part). Nobody gets a folded or mucked hand, an undealt card or the deck's
secret. Hands dealt before card commitments (``deckSeed`` in the stored row) are served the
same way without their seed, which would reveal every folded hand.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response
from sqlmodel import col, select

from api.deps import HandPage
from core.codec import EncryptionCodec, RefusedPayloadError
from db.engine import Database
from db.models import Hand
from db.readstore import open_private
from domain.phh import to_phh
from wire.game_state import HandRecord

log = logging.getLogger(__name__)


def own_seat(record: dict[str, Any], reader: str | None) -> str | None:
    """The seat ``reader`` had in this hand, if any."""
    if reader is None:
        return None
    return next((seat for seat, p in record.get("players", {}).items() if p == reader), None)


def _readable(record: dict[str, Any], reader: str | None, codec: EncryptionCodec) -> dict[str, Any]:
    """The stored record with what ``reader`` may not see taken out (engine keys)."""
    seat = own_seat(record, reader)
    out = {k: v for k, v in record.items() if k not in ("private", "deck_seed")}
    shown = set(record.get("shown", {}))
    hole = record.get("hole_cards", {})
    out["hole_cards"] = {s: cards for s, cards in hole.items() if s in shown}
    if seat is None:
        return out
    if "private" in record:
        try:
            mine = open_private(record, seat, codec)
        except RefusedPayloadError as err:
            log.error("a sealed seat of hand %s does not open: %s", record.get("hand_no"), err)
            mine = None
        if mine is not None:  # apart from holeCards, so that every reader hashes one record
            out["your_cards"] = {"seat": int(seat), **mine}
    elif seat in hole:  # a hand from before commitments: its row kept every seat's cards
        out["hole_cards"][seat] = hole[seat]
    return out


def served_record(
    record: dict[str, Any], reader: str | None, codec: EncryptionCodec
) -> dict[str, Any]:
    """The wire record (``HandRecord``) for ``reader`` (None: an observer)."""
    return HandRecord.model_validate(_readable(record, reader, codec)).to_wire()


def served_phh(record: dict[str, Any], reader: str | None, codec: EncryptionCodec) -> str:
    """The PHH text for ``reader``: unknown cards (``????``) for every hand not shown down
    and not the reader's own."""
    readable = _readable(record, reader, codec)
    names = {int(seat): player for seat, player in record.get("players", {}).items()}
    return to_phh(readable, names)


# -- listings (a tournament's and a room's hands) ------------------------------------------
NEXT_PAGE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Finished hands after ``after``, oldest first, at most ``limit``.",
        "headers": {
            "Link": {
                "description": (
                    'The next page, ``<…/hands?after=N&limit=L>; rel="next"`` (N the last hand'
                    " number of this page); absent on the last page."
                ),
                "schema": {"type": "string"},
            }
        },
    }
}
"""A hand listing's 200 in the OpenAPI document: its ``Link`` header (RFC 8288)."""


@dataclass(frozen=True, slots=True)
class FinishedHands:
    hands: list[Hand]
    more: bool
    """Hands follow the last of ``hands`` (the page was read one row long to know it)."""


async def finished_hands(db: Database, table: Any, page: HandPage) -> FinishedHands:
    """A page of finished hands of the tournament or room ``table`` selects, in order (a
    tournament's force-end marker, hand 0, is never in one: pages start after 0), and whether
    more follow it."""
    async with db.session() as session:
        hands = list(
            await session.exec(
                select(Hand)
                .where(table, col(Hand.hand_no) > page.after)
                .order_by(col(Hand.hand_no))
                .limit(page.limit + 1)
            )
        )
    return FinishedHands(hands[: page.limit], more=len(hands) > page.limit)


def link_next(request: Request, response: Response, page: HandPage, hands: FinishedHands) -> None:
    """``Link: <path?after=N&limit=L>; rel="next"`` while hands follow this page (a reference
    relative to the host the client asked, so a proxy in front changes nothing)."""
    if hands.more and hands.hands:
        after = hands.hands[-1].hand_no
        response.headers["Link"] = (
            f'<{request.url.path}?after={after}&limit={page.limit}>; rel="next"'
        )
