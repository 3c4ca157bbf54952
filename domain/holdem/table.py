"""Starting a hand from a table's point of view: seats, button positions and forced bets.

This is the entry point the TableWorkflow uses; ``Hand.start`` underneath takes per-player
lists (the shape PHH files and pokerkit use).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from domain.errors import DomainError, ErrorCode
from domain.holdem.hand import Hand
from domain.holdem.positions import ButtonPositions, seats_in_order


class AnteMode(StrEnum):
    NONE = "none"
    EVERY_PLAYER = "every_player"  # each dealt-in player posts the ante
    BIG_BLIND = "big_blind"  # the big blind posts it for the table, blind first if short


def start_hand(
    *,
    seat_count: int,
    positions: ButtonPositions,
    stacks: Mapping[int, int],
    small_blind: int,
    big_blind: int,
    deck: Sequence[str],
    ante: int = 0,
    ante_mode: AnteMode | str = AnteMode.NONE,
) -> Hand:
    """Deal a hand to the seats in ``stacks`` (seat → chips; busted seats left out).

    >>> from domain.holdem.cards import ALL_CARDS
    >>> hand = start_hand(seat_count=6, positions=ButtonPositions(0, 1, 2),
    ...                   stacks={0: 1000, 1: 1000, 2: 50, 4: 1000}, small_blind=10,
    ...                   big_blind=20, ante=20, ante_mode="big_blind", deck=ALL_CARDS)
    >>> hand.seats, hand.posted_blinds, hand.posted_antes, hand.actor_seat
    ([1, 2, 4, 0], [10, 20, 0, 0], [0, 20, 0, 0], 4)
    """
    ante_mode = AnteMode(ante_mode)
    live = [seat for seat, stack in stacks.items() if stack > 0]
    if len(live) != len(stacks):
        raise DomainError(ErrorCode.INVALID_STATE, "busted seats are not dealt in")
    if positions.big_blind not in stacks:
        raise DomainError(ErrorCode.INVALID_STATE, "the big blind must be a live seat")
    if not 0 < small_blind <= big_blind or ante < 0:
        raise DomainError(ErrorCode.INVALID_SETTINGS, "need 0 < small blind <= big blind")
    seats = seats_in_order(positions.button, live, seat_count)
    blinds = [0] * len(seats)
    antes = [0] * len(seats)
    for i, seat in enumerate(seats):
        if seat == positions.big_blind:
            blinds[i] = big_blind
            if ante_mode is AnteMode.BIG_BLIND:
                antes[i] = ante
        elif seat == positions.small_blind:
            blinds[i] = small_blind
        if ante_mode is AnteMode.EVERY_PLAYER:
            antes[i] = ante
    return Hand.start(
        seats=seats,
        stacks=[stacks[seat] for seat in seats],
        blinds=blinds,
        antes=antes,
        min_bet=big_blind,
        deck=deck,
        dead_antes=ante_mode is AnteMode.BIG_BLIND,
        blind_before_ante=ante_mode is AnteMode.BIG_BLIND,
        button=positions.button,
    )
