"""One player's tournament view: rank, stack in big blinds, M-ratio, pay jump and ICM equity.

These are the numbers the seed's ``tournamentMyView`` carries to players and agents (and the
poker:sng skill reasons with); computed here from chip counts, the current blinds and the
resolved payout amounts, so the API only has to call :func:`my_view`.

>>> view = my_view({"ann": 3000, "bob": 1500, "cat": 1500}, "bob", Blinds(50, 100, 10),
...                [600, 300, 100])
>>> view.to_wire()  # doctest: +NORMALIZE_WHITESPACE
{'rank': 2, 'stackInBigBlinds': 15.0, 'mRatio': 8.33, 'payJumpToNext': 300,
 'icmEquity': 291.67}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.blinds import Blinds
from domain.icm import icm_or_chip_equities
from domain.settings import StrictWireModel

__all__ = [
    "TournamentMyView",
    "live_rank",
    "m_ratio",
    "my_view",
    "pay_jump_to_next",
    "stack_in_big_blinds",
]


class TournamentMyView(StrictWireModel):
    """The seed's ``tournamentMyView`` plus ``icmEquity`` (additive, so the wire stays compatible).

    Ratios are rounded to two decimals for the wire; the functions below return them unrounded.
    """

    rank: int
    stack_in_big_blinds: float
    m_ratio: float
    pay_jump_to_next: int
    icm_equity: float
    """Expected prize by ICM (Malmuth-Harville), exact where its work fits
    ``domain.icm.EXACT_WORK_LIMIT`` (every single table); past it, in a multi-table field,
    the chip equity of the prizes at stake (docs/domain.md, "A multi-table field"). Always a
    number, as generated clients built before MTTs expect."""


def live_rank(stacks: Mapping[str, int], entrant: str) -> int:
    """1 + the number of live players with strictly more chips (equal stacks share a rank).

    >>> live_rank({"a": 10, "b": 30, "c": 30}, "c"), live_rank({"a": 10, "b": 30}, "a")
    (1, 2)
    """
    mine = stacks[entrant]
    return 1 + sum(1 for chips in stacks.values() if chips > mine)


def stack_in_big_blinds(stack: int, blinds: Blinds) -> float:
    """How many big blinds ``stack`` covers.

    >>> stack_in_big_blinds(1500, Blinds(10, 20))
    75.0
    """
    return stack / blinds.bb


def m_ratio(stack: int, blinds: Blinds, players_dealt_in: int) -> float:
    """Harrington's M: orbits ``stack`` survives paying blinds and antes without playing.

    One orbit costs SB + BB + ante × players dealt in (antes are per player, seed: antes).

    >>> m_ratio(1500, Blinds(50, 100, 10), 6)
    7.142857142857143
    """
    if players_dealt_in < 1:
        raise ValueError(f"players_dealt_in must be >= 1, got {players_dealt_in}")
    return stack / (blinds.sb + blinds.bb + blinds.ante * players_dealt_in)


def pay_jump_to_next(amounts_by_place: Sequence[int], place: int) -> int:
    """Chips gained by finishing one place higher than ``place`` (0 for first place).

    >>> [pay_jump_to_next([500, 300, 200], p) for p in (1, 2, 3, 4, 5)]
    [0, 200, 100, 200, 0]
    """
    if place < 1:
        raise ValueError(f"place must be >= 1, got {place}")

    def amount(p: int) -> int:
        return amounts_by_place[p - 1] if p <= len(amounts_by_place) else 0

    return 0 if place == 1 else amount(place - 1) - amount(place)


def my_view(
    stacks: Mapping[str, int],
    entrant: str,
    blinds: Blinds,
    amounts_by_place: Sequence[int],
    *,
    dealt_in: int | None = None,
) -> TournamentMyView:
    """The view for ``entrant`` among the live ``stacks`` (players with chips).

    The pay jump is taken from the entrant's current rank by stack, as the seed defines it
    ("gain by moving up one position"); ICM uses the prizes of places 1..len(stacks), those
    still at stake: exact, or the chip equity where the exact model would be too large
    (:func:`domain.icm.icm_or_chip_equities`: a big multi-table field before its last tables).
    ``dealt_in`` is the number of players the entrant's table deals in (default: every live
    stack, a single table's).
    """
    entrants = list(stacks)
    if dealt_in is None:
        dealt_in = sum(1 for chips in stacks.values() if chips > 0)
    rank = live_rank(stacks, entrant)
    equities = icm_or_chip_equities([stacks[e] for e in entrants], amounts_by_place)
    return TournamentMyView(
        rank=rank,
        stack_in_big_blinds=round(stack_in_big_blinds(stacks[entrant], blinds), 2),
        m_ratio=round(m_ratio(stacks[entrant], blinds, max(dealt_in, 1)), 2),
        pay_jump_to_next=pay_jump_to_next(amounts_by_place, rank),
        icm_equity=round(equities[entrants.index(entrant)], 2),
    )
