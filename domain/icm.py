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

__all__ = [
    "EXACT_WORK_LIMIT",
    "exact_work",
    "icm_equities",
    "icm_is_exact",
    "icm_or_chip_equities",
]

EXACT_WORK_LIMIT = 60_000
"""The most work (sets of placed players visited × players) an exact ICM may take: a full
10-handed table with every place paid is 10,230 (about 2 ms). Past it the exact model grows
combinatorially (60 players with 9 places paid: about 10^11 sets), so a multi-table field's
equity is estimated instead (``icm_or_chip_equities``)."""


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


def exact_work(players: int, paid: int) -> int:
    """The work ``icm_equities`` does for ``players`` live stacks and ``paid`` places at
    stake: the sets of players it visits (those who took places 1..j, j below the last paid
    place) times the players it tries at each.

    >>> exact_work(10, 10), exact_work(6, 2)
    (10230, 42)
    """
    work, sets = 0, 1
    for j in range(min(players, paid)):
        work += sets * players
        sets = sets * (players - j) // (j + 1)
        if work > EXACT_WORK_LIMIT:
            break  # enough to know it is over the limit (and no huge integers on the way)
    return work


def icm_is_exact(players: int, places: int) -> bool:
    """Whether ``icm_or_chip_equities`` over ``players`` live stacks and ``places`` prizes
    computes the exact model (the wire's ``mtt.icmExact``).

    >>> icm_is_exact(10, 10), icm_is_exact(60, 9)
    (True, False)
    """
    return exact_work(players, min(players, places)) <= EXACT_WORK_LIMIT


def icm_or_chip_equities(stacks: Sequence[int], prizes: Sequence[int | float]) -> list[float]:
    """``icm_equities`` where its work fits ``EXACT_WORK_LIMIT`` (every table of up to ten
    with its places, a final table); otherwise each stack's share of the chips times the
    prizes still at stake (chip equity: exact for first place alone, and an overestimate for
    big stacks when several places pay). Same sum either way.

    >>> icm_or_chip_equities([3000, 1000], [100])
    [75.0, 25.0]
    >>> [round(e) for e in icm_or_chip_equities([1000] * 60, [100] * 9)][:2]
    [15, 15]
    """
    n = len(stacks)
    paid = min(n, len(prizes))
    if icm_is_exact(n, len(prizes)):
        return icm_equities(stacks, prizes)
    if any(s < 0 for s in stacks):
        raise ValueError(f"stacks must be >= 0: {list(stacks)}")
    at_stake = float(sum(prizes[:paid]))
    total = sum(stacks)
    if total == 0:
        return [at_stake / n] * n if n else []
    return [at_stake * s / total for s in stacks]
