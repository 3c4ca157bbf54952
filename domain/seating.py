"""Seat assignment at the seal: a Fisher–Yates shuffle driven by a random source it is given.

The workflow passes ``workflow.random().randrange`` (replay-safe: the seed lives in history);
this module owns the algorithm, so it is the same in every caller and testable with any source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def draw_seats(players: Sequence[str], randbelow: Callable[[int], int]) -> dict[str, int]:
    """Assign seats 0..n-1 to ``players`` uniformly at random (Durstenfeld's Fisher–Yates).

    ``randbelow(k)`` must return an int uniformly in ``[0, k)``.

    >>> draw_seats(["a", "b", "c"], lambda k: 0)
    {'b': 0, 'c': 1, 'a': 2}
    >>> sorted(draw_seats(["a", "b", "c", "d"], lambda k: k - 1).values())
    [0, 1, 2, 3]
    """
    order = list(players)
    for i in range(len(order) - 1, 0, -1):
        j = randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return {player: seat for seat, player in enumerate(order)}
