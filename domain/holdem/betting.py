"""What the player to act may do: legal actions, the amount to call, min and max raise-to.

The rules mirror pokerkit's no-limit logic (our oracle): the minimum raise is the larger of the
big blind and the last full raise; an all-in for less than a full raise does not reopen the
betting for players who already acted unless consecutive short all-ins add up to a full raise
(WSOP 2024 rules 95-96); nobody may raise when every other live player is all-in or covered.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from domain.holdem.hand import Hand


class ActionKind(StrEnum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    RAISE = "raise"
    ALL_IN = "all_in"


@dataclass(frozen=True, slots=True)
class LegalActions:
    """The choices of the seat to act. Raise amounts are *to* amounts (the bet's new total)."""

    seat: int
    actions: tuple[ActionKind, ...]
    to_call: int
    min_raise_to: int | None
    max_raise_to: int | None

    def to_dict(self) -> dict[str, object]:
        return {
            "seat": self.seat,
            "actions": [str(kind) for kind in self.actions],
            "to_call": self.to_call,
            "min_raise_to": self.min_raise_to,
            "max_raise_to": self.max_raise_to,
        }


def to_call(hand: Hand, player: int) -> int:
    """Chips the player must add to call (capped by the stack: a short call is all-in)."""
    return min(max(hand.bets) - hand.bets[player], hand.stacks[player])


def raise_refusal(hand: Hand, player: int) -> str | None:
    """Why the player may not raise now, or None when a raise is allowed."""
    max_bet = max(hand.bets)
    if to_call(hand, player) < hand.raise_amount:
        return "a short all-in cannot be re-raised by a player facing less than a full raise"
    if hand.short_all_ins and sum(hand.short_all_ins) < hand.raise_amount and player in hand.acted:
        return "an all-in for less than a full raise does not reopen the betting"
    if hand.stacks[player] <= max_bet - hand.bets[player]:
        return "the stack only covers a call"
    for other in range(len(hand.seats)):
        if (
            other != player
            and not hand.folded[other]
            and hand.stacks[other] + hand.bets[other] > max_bet
        ):
            return None
    return "every other player has folded or is all-in"


def min_raise_to(hand: Hand, player: int) -> int:
    increment = max(hand.raise_amount, hand.min_bet)
    return min(hand.stacks[player] + hand.bets[player], max(hand.bets) + increment)


def legal_actions(hand: Hand, player: int) -> LegalActions:
    max_bet = max(hand.bets)
    facing = hand.bets[player] < max_bet
    kinds: list[ActionKind] = []
    if facing:
        kinds += [ActionKind.FOLD, ActionKind.CALL]
    else:
        kinds.append(ActionKind.CHECK)
    can_raise = raise_refusal(hand, player) is None
    if can_raise:
        kinds.append(ActionKind.RAISE)
    if can_raise or (facing and hand.stacks[player] <= max_bet - hand.bets[player]):
        kinds.append(ActionKind.ALL_IN)
    return LegalActions(
        seat=hand.seats[player],
        actions=tuple(kinds),
        to_call=to_call(hand, player),
        min_raise_to=min_raise_to(hand, player) if can_raise else None,
        max_raise_to=hand.stacks[player] + hand.bets[player] if can_raise else None,
    )
