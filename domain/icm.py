"""ICM equity: what each live stack is worth in prize money (Malmuth–Harville, exact).

Harville's model: a player finishes first with probability stack / total chips; given who
finished above, the next place goes the same way among the rest. Summing over every order
exactly would be n! sequences; a dynamic programme over the *set* of players already placed
visits each subset once instead, and stops at the last paid place. For a full 10-handed table
with every place paid that is 1,023 subsets — fast enough for every state poll
(docs/domain.md has the measured figure).

>>> [round(e, 2) for e in icm_equities([5000, 3000, 2000], [500, 300, 200])]
[383.93, 327.5, 288.57]
>>> icm_equities([1, 1], [100])
[50.0, 50.0]
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ICM_MAX_STEPS", "icm_equities", "icm_is_bounded", "icm_steps"]

ICM_MAX_STEPS = 100_000
"""The most inner steps (players × sets of players already placed) :func:`icm_equities` may
take for a game state: about 20 ms of Python. A full 10-handed table with every place paid
takes 10,230; an MTT of 60 with 9 paid would take about 10^11, so a large field's
``icmEquity`` is null until its field is small enough (docs/domain.md, "ICM")."""


def icm_steps(players: int, paid: int) -> int:
    """The inner steps of :func:`icm_equities` for ``players`` live stacks and ``paid`` places
    at stake: each player tried against every set of fewer than ``paid`` placed players.

    >>> icm_steps(10, 10), icm_steps(3, 2), icm_steps(60, 9) > 10**11
    (10230, 12, True)
    """
    paid = min(players, paid)
    sets, size = 0, 1
    for j in range(paid):
        sets += size
        size = size * (players - j) // (j + 1)
    return players * sets


def icm_is_bounded(players: int, paid: int) -> bool:
    """Whether ICM over ``players`` stacks with ``paid`` places is cheap enough to compute for
    a game state (:data:`ICM_MAX_STEPS`).

    >>> icm_is_bounded(10, 10), icm_is_bounded(12, 2), icm_is_bounded(60, 9)
    (True, True, False)
    """
    return icm_steps(players, paid) <= ICM_MAX_STEPS


def icm_equities(stacks: Sequence[int], prizes: Sequence[int | float]) -> list[float]:
    """Each player's expected prize, in the units of ``prizes`` (index 0 = first place).

    ``stacks`` are the live players' chips; ``prizes`` the amounts for places 1, 2, ... still
    at stake. Places beyond ``len(stacks)`` are ignored (they belong to players already out),
    so the equities sum to ``sum(prizes[:len(stacks)])``. Players with no chips are placed
    after every player with chips, sharing what is left evenly.

    >>> icm_equities([100, 0, 0], [60, 30, 10])
    [60.0, 20.0, 20.0]
    """
    n = len(stacks)
    if any(s < 0 for s in stacks):
        raise ValueError(f"stacks must be >= 0: {list(stacks)}")
    paid = min(n, len(prizes))
    while paid and prizes[paid - 1] == 0:
        paid -= 1  # unpaid tail places change nobody's equity
    equities = [0.0] * n
    if paid == 0:
        return equities
    total = sum(stacks)
    # Level j maps "the set of players who took places 1..j" (a bitmask) to its probability
    # and the chips those players held, so each step needs only the remaining total.
    level: dict[int, tuple[float, int]] = {0: (1.0, 0)}
    for place in range(paid):
        prize = prizes[place]
        following: dict[int, tuple[float, int]] = {}
        for mask, (probability, placed_chips) in level.items():
            remaining_chips = total - placed_chips
            remaining_players = n - place
            for i in range(n):
                bit = 1 << i
                if mask & bit:
                    continue
                if remaining_chips > 0:
                    p = probability * stacks[i] / remaining_chips
                else:
                    p = probability / remaining_players
                if p == 0.0:
                    continue
                equities[i] += p * prize
                if place + 1 < paid:
                    prior = following.get(mask | bit)
                    if prior is None:
                        following[mask | bit] = (p, placed_chips + stacks[i])
                    else:
                        following[mask | bit] = (prior[0] + p, prior[1])
        level = following
    return equities
