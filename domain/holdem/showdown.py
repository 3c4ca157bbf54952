"""Pots, who shows first and who wins what.

Main and side pots are built from each player's total commitment (uncalled chips come back as a
pot only their owner can win). With ``dead_antes`` (the big-blind ante) the antes are dead money
in the main pot, as WSOP rules have it. Each pot is split on its own (rule 74) and the odd chips
of a split go to the first winner left of the button (rule 73). Adjacent pots with the same
eligible players are merged first, as pokerkit does, so odd chips agree with the oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # player indices (order from the button), not seat numbers


def build_pots(
    committed: Sequence[int],
    antes: Sequence[int],
    live: Sequence[bool],
    *,
    dead_antes: bool,
) -> list[Pot]:
    """>>> build_pots([100, 300, 300], [0, 0, 0], [True, True, True], dead_antes=False)
    [Pot(amount=300, eligible=(0, 1, 2)), Pot(amount=400, eligible=(1, 2))]
    >>> build_pots([100, 80, 300], [0, 0, 0], [True, False, True], dead_antes=False)
    [Pot(amount=280, eligible=(0, 2)), Pot(amount=200, eligible=(2,))]
    """
    contributions = list(committed)
    amount = 0
    if dead_antes:
        for i, ante in enumerate(antes):
            contributions[i] -= ante
            amount += ante
    pots: list[Pot] = []
    previous = 0
    for level in sorted(set(contributions)):
        for contribution in contributions:
            if contribution >= level:
                amount += level - previous
        eligible = tuple(
            i for i, contribution in enumerate(contributions) if live[i] and contribution >= level
        )
        while pots and pots[-1].eligible == eligible:
            amount += pots.pop().amount
        if amount:
            pots.append(Pot(amount, eligible))
        amount = 0
        previous = level
    return pots


def split_pot(pot: Pot, strengths: Sequence[int | None]) -> dict[int, int]:
    """Shares of one pot: the best hands among its eligible players split it; odd chips go to
    the first of them left of the button (lowest index).

    >>> split_pot(Pot(101, (0, 1, 2)), [5, 9, 9])
    {1: 51, 2: 50}
    """
    if len(pot.eligible) == 1:
        return {pot.eligible[0]: pot.amount}
    scored = [(strengths[i], i) for i in pot.eligible]
    best = max(score for score, _ in scored if score is not None)
    winners = [i for score, i in scored if score == best]
    share, odd = divmod(pot.amount, len(winners))
    return {i: share + (odd if k == 0 else 0) for k, i in enumerate(winners)}


def showdown_order(live: Sequence[bool], last_aggressor: int | None) -> list[int]:
    """The last aggressor shows first, then the others in order around the table; with no
    aggressor on the last round, the first live player left of the button starts.

    >>> showdown_order([True, False, True, True], 2)
    [2, 3, 0]
    >>> showdown_order([True, True, True], None)
    [0, 1, 2]
    """
    count = len(live)
    start = last_aggressor if last_aggressor is not None and live[last_aggressor] else 0
    return [(start + k) % count for k in range(count) if live[(start + k) % count]]
