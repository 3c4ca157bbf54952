"""The MTT payout table (domain/mtt/payouts.py) against MTT conventions, and the seed's
SnG-anchored structure that it replaces for multi-table fields."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.mtt.payouts import MIN_CASH_MULTIPLE, mtt_paid_places, mtt_payouts
from domain.payouts import payout_amounts, payouts_for_field_size
from domain.settings import PayoutStructure


@given(
    field_size=st.integers(min_value=1, max_value=20_000),
    per_entry=st.integers(min_value=0, max_value=10**9),
)
def test_amounts_sum_to_the_pool_never_increase_and_pay_at_least_twice_the_entry(
    field_size: int, per_entry: int
) -> None:
    pool = field_size * per_entry
    amounts = mtt_payouts(field_size=field_size, pool=pool)
    assert len(amounts) == mtt_paid_places(field_size)
    assert sum(amounts) == pool
    assert all(a >= b for a, b in pairwise(amounts))
    if field_size > 1:
        assert amounts[-1] >= MIN_CASH_MULTIPLE * per_entry


@pytest.mark.parametrize(
    ("field", "paid", "first_pct"),
    [
        (20, 3, (45, 55)),
        (60, 9, (25, 35)),
        (200, 30, (18, 25)),
        (1_000, 150, (13, 20)),
        (10_000, 1_500, (10, 15)),
    ],
)
def test_the_table_matches_published_mtt_tables_within_reason(
    field: int, paid: int, first_pct: tuple[int, int]
) -> None:
    """docs/mtt.md's comparison: 15 % paid, first place in the band of the published tables."""
    amounts = mtt_payouts(field_size=field, pool=field * 100)
    assert len(amounts) == paid
    low, high = first_pct
    assert low <= 100 * amounts[0] / (field * 100) <= high


def test_the_seed_structure_does_not_scale_to_mtt_fields() -> None:
    """Why the MTT table exists: at 1,000 the SnG default pays 30 % of the field and its last
    place less than an entry; at 10,000 places floor to 0 and first place takes their dust."""
    default = PayoutStructure()
    thousand = payout_amounts(payouts_for_field_size(default, 1_000), 100_000)
    assert len(thousand) == 300 and thousand[-1] < 100
    ten_thousand = payouts_for_field_size(default, 10_000)
    assert ten_thousand.count(0) > 1_000
    assert ten_thousand[0] > 2_000  # > 20 % to first, above its own 1,000-field share


def test_bad_input_is_a_caller_bug() -> None:
    with pytest.raises(ValueError):
        mtt_payouts(field_size=0, pool=10)
    with pytest.raises(ValueError):
        mtt_payouts(field_size=10, pool=-1)
