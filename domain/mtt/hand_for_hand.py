"""Hand-for-hand on the bubble, and the places of players who bust in one hand-for-hand round.

**When.** Hand-for-hand is played while the next bust changes who is paid: one player more
than the paid places is left, on more than one table. Every table then deals one hand at a
time in step (the next hand starts on no table before the current one has finished on all),
so nobody can stall into the money while another table plays on. When a single table is left
there is nothing to synchronise. The final-table bubble pays nobody and is not played
hand-for-hand here (a choice the TDA leaves to the house).

**Places.** The TDA's rule for players who bust during one hand-for-hand round: at the same
table, the player who started the hand with more chips finishes higher (as for any same-hand
bust, ``domain/standings.py``, WSOP rule 126b); at different tables, they tie and split the
prizes of the places they cover. Busts of one round are therefore ranked in tiers: tier 1
holds the deepest bust of every table (players with exactly equal stacks at one table share
their tier), tier 2 the next deepest, and so on. A tier takes the best places left, its
members tie, and :func:`domain.standings.split_prizes` shares their prizes with the house's
integer rule (equal shares, the odd chips one at a time to the higher places). With one bust
per table, the common case, the whole round is one tie.

>>> hand_for_hand(players_left=10, paid_places=9, tables_left=2)
True
>>> busts = [RoundBust("ann", table_id=1, pre_hand_stack=900),
...          RoundBust("bob", table_id=2, pre_hand_stack=300)]
>>> finishes = order_round_busts(busts, alive_before=10)
>>> [(f.entrant, f.place, f.rank) for f in finishes]
[('ann', 9, 9), ('bob', 10, 9)]
>>> from domain.standings import split_prizes
>>> [(a.entrant, a.amount) for a in split_prizes(finishes, [500, 300, 200, 150, 120, 100,
...                                                         90, 80, 61])]
[('ann', 31), ('bob', 30)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.standings import Finish

__all__ = ["RoundBust", "hand_for_hand", "order_round_busts", "place_round"]


@dataclass(frozen=True, slots=True)
class RoundBust:
    """A player who busted in the current hand-for-hand round, with the table it busted at
    and the chips it started that hand with."""

    entrant: str
    table_id: int
    pre_hand_stack: int


def hand_for_hand(*, players_left: int, paid_places: int, tables_left: int) -> bool:
    """Whether the next hand is dealt hand-for-hand: the next bust changes who is paid.

    That is exactly when one more player is left than places are paid (the next bust is the
    bubble; after it everyone left is paid), with two or more tables running.

    >>> [hand_for_hand(players_left=n, paid_places=9, tables_left=2) for n in (11, 10, 9)]
    [False, True, False]
    >>> hand_for_hand(players_left=10, paid_places=9, tables_left=1)
    False
    """
    if players_left < 0 or paid_places < 1 or tables_left < 0:
        raise ValueError("players_left, tables_left >= 0 and paid_places >= 1")
    return tables_left > 1 and players_left == paid_places + 1


def order_round_busts(busts: Sequence[RoundBust], *, alive_before: int) -> tuple[Finish, ...]:
    """Places for the players who busted in one hand-for-hand round (module docstring).

    ``alive_before`` counts the players left before the round, the busted ones included; the
    busts take the worst places still open. Within a tier, places are handed out in the order
    the busts are listed (pass them by table, then seat from the button: the odd chips of a
    split go to the earlier ones).

    >>> same_table = [RoundBust("a", 1, 500), RoundBust("b", 1, 800), RoundBust("c", 2, 200)]
    >>> [(f.entrant, f.place, f.rank) for f in order_round_busts(same_table, alive_before=30)]
    [('b', 28, 28), ('c', 29, 28), ('a', 30, 30)]
    """
    entrants = [b.entrant for b in busts]
    if len(set(entrants)) != len(entrants):
        raise ValueError(f"an entrant busted twice: {entrants}")
    if any(b.pre_hand_stack <= 0 for b in busts):
        raise ValueError("a player who busted started the hand with chips")
    if len(busts) > alive_before:
        raise ValueError(f"{len(busts)} busts but only {alive_before} players were alive")

    def tier(bust: RoundBust) -> int:
        deeper = {
            b.pre_hand_stack
            for b in busts
            if b.table_id == bust.table_id and b.pre_hand_stack > bust.pre_hand_stack
        }
        return len(deeper) + 1

    ordered = sorted(busts, key=tier)  # stable: the caller's order within a tier
    finishes: list[Finish] = []
    place = alive_before - len(busts) + 1
    for i, bust in enumerate(ordered):
        same_tier = i > 0 and tier(ordered[i - 1]) == tier(bust)
        rank = finishes[-1].rank if same_tier else place
        finishes.append(Finish(entrant=bust.entrant, place=place, rank=rank))
        place += 1
    return tuple(finishes)


def place_round(busts: Sequence[RoundBust], *, alive_after: int) -> tuple[Finish, ...]:
    """The places of a closed hand-for-hand round, whatever order its tables reported in.

    The table manager collects a round's busts as its tables report (in any order) and
    places them once every table of the round has reported. ``alive_after`` counts the
    players left after the round; the busts take the places just below them. Within a tier
    the busts are listed by table number, then in the order given for each table (the
    tournament takes each report's busts by seat, ``busts-by-seat-v1``), so the odd chips of
    a split go to the lowest table first: the remainder rule does not depend on which table
    finished its hand first.

    >>> late_first = [RoundBust("bob", 2, 300), RoundBust("ann", 1, 900)]
    >>> [(f.entrant, f.place, f.rank) for f in place_round(late_first, alive_after=8)]
    [('ann', 9, 9), ('bob', 10, 9)]
    """
    if alive_after < 1:
        raise ValueError("a hand-for-hand round leaves at least one player")
    by_table = sorted(busts, key=lambda b: b.table_id)  # stable: each table's own order
    return order_round_busts(by_table, alive_before=alive_after + len(busts))
