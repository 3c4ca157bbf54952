"""Finishing places: same-hand busts, force-end ranking, final standings and tied prize splits.

Deeper chips finish higher, whether the chips are the pre-hand stacks of players who bust on
one hand (WSOP rule 126b) or the live stacks an operator's force-end ranks. Exactly equal
chips tie: the tied entrants share one ``rank`` (the best place of the group) and split the
prizes of the places they cover, the odd chip going to the higher place. Each entrant still
gets a distinct ``place`` — the key of its payout intent — assigned in the order the caller
lists tied entrants (pass them in seat order from the button for the house's odd-chip rule).

>>> busts = order_busts([("ann", 300), ("bob", 500), ("cat", 300)], alive_before=6)
>>> [(f.entrant, f.place, f.rank) for f in busts]
[('bob', 4, 4), ('ann', 5, 5), ('cat', 6, 5)]
>>> [(a.entrant, a.amount) for a in split_prizes(busts, [50, 30, 10, 7, 3])]
[('bob', 7), ('ann', 2), ('cat', 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

__all__ = [
    "Award",
    "Finish",
    "final_standings",
    "force_end_ranking",
    "order_busts",
    "rank_by_chips",
    "split_prizes",
]

ChipCounts = Sequence[tuple[str, int]] | Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Finish:
    """Where one entrant finished.

    ``place`` is distinct per entrant (1 = winner) and keys the payout intent; ``rank`` is
    what players see, shared by entrants who tied (the best place their group covers).
    """

    entrant: str
    place: int
    rank: int


@dataclass(frozen=True, slots=True)
class Award:
    """The chips one entrant receives for its finish, after tied groups split their prizes."""

    entrant: str
    place: int
    amount: int


def _pairs(chips: ChipCounts) -> list[tuple[str, int]]:
    pairs = list(chips.items()) if isinstance(chips, Mapping) else list(chips)
    entrants = [e for e, _ in pairs]
    if len(set(entrants)) != len(entrants):
        raise ValueError(f"an entrant appears twice: {entrants}")
    if any(c < 0 for _, c in pairs):
        raise ValueError(f"chip counts must be >= 0: {pairs}")
    return pairs


def rank_by_chips(chips: ChipCounts, *, best_place: int) -> tuple[Finish, ...]:
    """Places ``best_place``, ``best_place + 1``, ... by chips, most chips first, ties shared.

    The sort is stable, so entrants with equal chips take consecutive places in the order
    given.

    >>> [(f.entrant, f.place, f.rank) for f in rank_by_chips({"a": 1, "b": 9, "c": 9},
    ...                                                       best_place=1)]
    [('b', 1, 1), ('c', 2, 1), ('a', 3, 3)]
    """
    if best_place < 1:
        raise ValueError(f"best_place must be >= 1, got {best_place}")
    ordered = sorted(_pairs(chips), key=lambda pair: -pair[1])
    finishes: list[Finish] = []
    for place, (entrant, count) in enumerate(ordered, start=best_place):
        tied_with_previous = finishes and ordered[place - best_place - 1][1] == count
        rank = finishes[-1].rank if tied_with_previous else place
        finishes.append(Finish(entrant=entrant, place=place, rank=rank))
    return tuple(finishes)


def order_busts(pre_hand_stacks: ChipCounts, *, alive_before: int) -> tuple[Finish, ...]:
    """Places for the entrants who busted on one hand, by their stacks before that hand.

    ``alive_before`` is how many entrants were still in before the hand (the busted ones
    included); the busts take the worst places still open, ``alive_before`` upward.

    >>> [(f.entrant, f.place) for f in order_busts([("short", 40)], alive_before=9)]
    [('short', 9)]
    """
    pairs = _pairs(pre_hand_stacks)
    if len(pairs) > alive_before:
        raise ValueError(f"{len(pairs)} busts but only {alive_before} entrants were alive")
    return rank_by_chips(pairs, best_place=alive_before - len(pairs) + 1)


def force_end_ranking(live_stacks: ChipCounts) -> tuple[Finish, ...]:
    """An operator force-end: live seats take places 1.. by stack, equal stacks tied.

    Also names the winner when one entrant is left: ``force_end_ranking({winner: stack})``.
    """
    return rank_by_chips(live_stacks, best_place=1)


def final_standings(finishes: Iterable[Finish], *, field_size: int) -> tuple[Finish, ...]:
    """Every entrant's finish, by place, checked to cover places 1..field_size exactly once.

    >>> final_standings([Finish("b", 2, 2), Finish("a", 1, 1)], field_size=2)
    (Finish(entrant='a', place=1, rank=1), Finish(entrant='b', place=2, rank=2))
    """
    ordered = tuple(sorted(finishes, key=lambda f: f.place))
    if [f.place for f in ordered] != list(range(1, field_size + 1)):
        raise ValueError(f"places must cover 1..{field_size} once: {[f.place for f in ordered]}")
    if len({f.entrant for f in ordered}) != field_size:
        raise ValueError("an entrant finished twice")
    return ordered


def split_prizes(finishes: Iterable[Finish], amounts_by_place: Sequence[int]) -> tuple[Award, ...]:
    """Chips per entrant: ``amounts_by_place[p - 1]`` for place p, tied groups splitting evenly.

    A tied group pools the amounts of the places it covers (0 for unpaid places) and shares
    them; the remainder goes one chip at a time to the group's higher places. Every chip of
    the covered places is handed out, so a full standings list receives exactly the pool.

    >>> ties = rank_by_chips({"a": 5, "b": 5, "c": 5}, best_place=1)
    >>> [a.amount for a in split_prizes(ties, [50, 30, 20])]
    [34, 33, 33]
    """

    def amount_at(place: int) -> int:
        return amounts_by_place[place - 1] if place <= len(amounts_by_place) else 0

    awards: list[Award] = []
    ordered = sorted(finishes, key=lambda f: f.place)
    for _, group_iter in groupby(ordered, key=lambda f: f.rank):
        group = list(group_iter)
        pooled = sum(amount_at(f.place) for f in group)
        share, odd = divmod(pooled, len(group))
        awards.extend(
            Award(entrant=f.entrant, place=f.place, amount=share + (1 if i < odd else 0))
            for i, f in enumerate(group)
        )
    return tuple(awards)


def entries_by_finish(
    finishes: Sequence[tuple[str, int]], paid_entries: Mapping[str, int]
) -> list[int | None]:
    """Which paid entry of its player each finish is (0 for the first), in ``finishes``'
    order: a player's entries finish in the order they were paid (an entry is taken only once
    the one before it busted), and an earlier finish has the larger place, so the k-th largest
    place of a player is its k-th paid entry's. None for every finish of a player whose paid
    entries are not all known (as many as its finishes).

    >>> entries_by_finish([("b", 3), ("a", 2), ("b", 1)], {"a": 1, "b": 2})
    [0, 0, 1]
    >>> entries_by_finish([("b", 3), ("a", 2), ("b", 1)], {"a": 1, "b": 1})
    [None, 0, None]
    """
    mine: dict[str, list[int]] = {}
    for i, (player, _place) in enumerate(finishes):
        mine.setdefault(player, []).append(i)
    out: list[int | None] = [None] * len(finishes)
    for player, indices in mine.items():
        if paid_entries.get(player, 0) != len(indices):
            continue
        for k, i in enumerate(sorted(indices, key=lambda i: -finishes[i][1])):
            out[i] = k
    return out
