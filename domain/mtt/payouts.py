"""An MTT payout table: ~15 % of the field paid, a min-cash of twice the entry, integer chips.

The seed's parametric structure (``domain/payouts.py``: 30 % paid, weights p^-0.85, basis
points) is anchored to Sit-and-Go conventions and does not scale to MTT fields: at 1,000
entrants its 300th place gets 0.8 of an entry, and at 10,000 a third of the paid places floor
to 0 basis points, their dust lifting first place to 23 % (docs/mtt.md has the comparison).
This table follows the conventions of published MTT tables instead:

- **Paid places**: 15 % of the field, rounded half up, at least one (WSOP: "designed to be
  about 15 %"; online tables pay 13-18 %).
- **Min-cash**: every paid place gets at least twice the pool per entrant (the WSOP's 2024
  "min-cash of two times the buy-in" for most events), floored to a whole chip.
- **The rest** of the pool is shared by weights p^-1.1 (place p), a little steeper than 1/p,
  which puts first place near the published tables (about 21 % at 200 entrants, 16 % at
  1,000, 12 % at 10,000).
- **Integers**: each place gets its floor, and the rounding dust goes to first place, so the
  amounts sum to the pool exactly and never increase down the list.

>>> mtt_payouts(field_size=60, pool=6000)  # 60 entrants of 100: 9 paid, min-cash 344
[1819, 953, 682, 551, 474, 425, 389, 363, 344]
"""

from __future__ import annotations

import math

__all__ = [
    "MIN_CASH_MULTIPLE",
    "MTT_PAID_PERCENT",
    "MTT_TOP_HEAVINESS",
    "mtt_paid_places",
    "mtt_payouts",
]

MTT_PAID_PERCENT = 15
MIN_CASH_MULTIPLE = 2
MTT_TOP_HEAVINESS = 1.1


def mtt_paid_places(field_size: int) -> int:
    """How many places an MTT of ``field_size`` pays: 15 %, rounded half up, at least 1.

    >>> [mtt_paid_places(n) for n in (1, 20, 60, 200, 1_000, 10_000)]
    [1, 3, 9, 30, 150, 1500]
    """
    if field_size < 1:
        raise ValueError(f"field_size must be >= 1, got {field_size}")
    return min(field_size, max(1, (field_size * MTT_PAID_PERCENT * 2 + 100) // 200))


def mtt_payouts(*, field_size: int, pool: int) -> list[int]:
    """Chips per paid place (index 0 is first place): sums to ``pool``, never increasing,
    every place at least ``MIN_CASH_MULTIPLE × pool // field_size`` when the pool allows it.

    >>> a = mtt_payouts(field_size=10_000, pool=10_000 * 100)
    >>> len(a), sum(a), a[-1], a[0]
    (1500, 1000000, 238, 122218)
    """
    paid = mtt_paid_places(field_size)
    if pool < 0:
        raise ValueError(f"pool must be >= 0, got {pool}")
    min_cash = min(MIN_CASH_MULTIPLE * pool // field_size, pool // paid)
    rest = pool - paid * min_cash
    weights = [p**-MTT_TOP_HEAVINESS for p in range(1, paid + 1)]
    total = math.fsum(weights)
    amounts = [min_cash + math.floor(rest * w / total) for w in weights]
    amounts[0] += pool - sum(amounts)
    return amounts
