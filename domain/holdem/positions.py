"""Where the button and the blinds go: the dead-button rule (WSOP 2024 rule 85) and heads-up (87).

The big blind always moves to the next live seat, the small blind goes to the seat that had the
big blind (dead if that player busted: no small blind is posted) and the button to the seat that
had the small blind (dead if that seat is now empty). Nobody misses a big blind and nobody posts
it twice in a row. Heads-up, the button posts the small blind and acts first preflop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.errors import DomainError, ErrorCode


@dataclass(frozen=True, slots=True)
class ButtonPositions:
    """Seat numbers for one hand. A position on a seat that is not live is dead: a dead small
    blind is not posted, a dead button is dealt no cards."""

    button: int
    small_blind: int
    big_blind: int

    def to_dict(self) -> dict[str, int]:
        return {"button": self.button, "small_blind": self.small_blind, "big_blind": self.big_blind}

    @classmethod
    def from_dict(cls, data: dict[str, int]) -> ButtonPositions:
        return cls(data["button"], data["small_blind"], data["big_blind"])


def _next_live(seat: int, live: Sequence[int], seat_count: int) -> int:
    for step in range(1, seat_count + 1):
        candidate = (seat + step) % seat_count
        if candidate in live:
            return candidate
    raise DomainError(ErrorCode.INVALID_STATE, "no live seat")


def verify_live_seats(live_seats: Sequence[int], seat_count: int) -> None:
    if len(set(live_seats)) < 2:
        raise DomainError(ErrorCode.INVALID_STATE, "a hand needs at least two live seats")
    if any(not 0 <= seat < seat_count for seat in live_seats):
        raise DomainError(ErrorCode.UNKNOWN_SEAT, "live seat outside the table")


def first_positions(live_seats: Sequence[int], seat_count: int, button: int) -> ButtonPositions:
    """Positions for a table's first hand, with the button drawn onto a live seat.

    >>> first_positions([0, 1, 2, 3], 6, 0)
    ButtonPositions(button=0, small_blind=1, big_blind=2)
    >>> first_positions([2, 5], 6, 5)  # heads-up: the button is the small blind
    ButtonPositions(button=5, small_blind=5, big_blind=2)
    """
    verify_live_seats(live_seats, seat_count)
    if button not in live_seats:
        raise DomainError(ErrorCode.INVALID_STATE, "the first button must be on a live seat")
    if len(set(live_seats)) == 2:
        return ButtonPositions(button, button, _next_live(button, live_seats, seat_count))
    small_blind = _next_live(button, live_seats, seat_count)
    return ButtonPositions(button, small_blind, _next_live(small_blind, live_seats, seat_count))


def next_positions(
    previous: ButtonPositions, live_seats: Sequence[int], seat_count: int
) -> ButtonPositions:
    """Positions for the next hand under the dead-button rule.

    >>> prev = ButtonPositions(button=0, small_blind=1, big_blind=2)
    >>> next_positions(prev, [0, 1, 2, 3, 4], 5)
    ButtonPositions(button=1, small_blind=2, big_blind=3)
    >>> after = next_positions(prev, [0, 1, 3, 4], 5)  # the big blind busted: dead small blind
    >>> after
    ButtonPositions(button=1, small_blind=2, big_blind=3)
    >>> next_positions(after, [0, 1, 3, 4], 5)  # ... and then a dead button
    ButtonPositions(button=2, small_blind=3, big_blind=4)
    >>> next_positions(prev, [0, 2, 3, 4], 5)  # the small blind busted: dead button
    ButtonPositions(button=1, small_blind=2, big_blind=3)
    >>> next_positions(prev, [0, 2], 5)  # down to heads-up: the other player has the button
    ButtonPositions(button=2, small_blind=2, big_blind=0)
    """
    verify_live_seats(live_seats, seat_count)
    big_blind = _next_live(previous.big_blind, live_seats, seat_count)
    if len(set(live_seats)) == 2:
        # Rule 87: the button posts the small blind; the big blind still just moved on, so
        # nobody takes the big blind twice in a row.
        other = next(seat for seat in live_seats if seat != big_blind)
        return ButtonPositions(other, other, big_blind)
    return ButtonPositions(previous.small_blind, previous.big_blind, big_blind)


def seats_in_order(button: int, live_seats: Sequence[int], seat_count: int) -> list[int]:
    """Live seats in the order they act after the flop: first seat left of the button first.

    >>> seats_in_order(1, [0, 2, 3, 4], 5)
    [2, 3, 4, 0]
    >>> seats_in_order(5, [2, 5], 6)
    [2, 5]
    """
    return sorted(set(live_seats), key=lambda seat: (seat - button - 1) % seat_count)
