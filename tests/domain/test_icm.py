"""ICM equities: Harville's model checked against brute force, and conservation (speed is `sng bench` figure 7)."""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.icm import EXACT_WORK_LIMIT, exact_work, icm_equities, icm_or_chip_equities


def brute_force(stacks: list[int], prizes: list[int]) -> list[Fraction]:
    """Every finishing order weighted by its Harville probability, exactly."""
    n = len(stacks)
    equities = [Fraction(0)] * n
    for order in permutations(range(n)):
        probability, left = Fraction(1), sum(stacks)
        for placed, i in enumerate(order):
            probability *= Fraction(stacks[i], left) if left else Fraction(1, n - placed)
            left -= stacks[i]
        for place, i in enumerate(order[: len(prizes)]):
            equities[i] += probability * prizes[place]
    return equities


def test_heads_up_is_chip_proportional() -> None:
    assert icm_equities([3000, 1000], [100, 0]) == [75.0, 25.0]


def test_equal_stacks_get_equal_equity() -> None:
    equities = icm_equities([1500] * 9, [5000, 3000, 2000])
    assert all(e == pytest.approx(10_000 / 9) for e in equities)


def test_chip_leader_is_worth_less_than_chip_proportional() -> None:
    big, small, _ = icm_equities([7000, 2000, 1000], [500, 300, 200])
    assert big < 1000 * 0.7 and small > 1000 * 0.2


def test_prizes_for_places_beyond_the_live_players_are_ignored() -> None:
    assert sum(icm_equities([500, 500], [50, 30, 20])) == pytest.approx(80)


def test_no_players_or_no_prizes() -> None:
    assert icm_equities([], [100]) == []
    assert icm_equities([1, 2], []) == [0.0, 0.0]


@settings(max_examples=60)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=6),
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=6),
)
def test_matches_brute_force_over_every_finishing_order(
    stacks: list[int], prizes: list[int]
) -> None:
    exact = brute_force(stacks, prizes)
    assert icm_equities(stacks, prizes) == pytest.approx([float(e) for e in exact], abs=1e-6)


@given(
    st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=10),
    st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=10),
)
def test_equities_sum_to_the_pool_at_stake(stacks: list[int], prizes: list[int]) -> None:
    pool = sum(prizes[: len(stacks)])
    equities = icm_equities(stacks, prizes)
    assert sum(equities) == pytest.approx(pool, rel=1e-9, abs=1e-6)
    assert all(e >= 0 for e in equities)


def test_a_multi_table_field_gets_chip_equity_not_an_exact_icm_it_cannot_afford() -> None:
    """60 live stacks with 9 places paid: the exact model would visit about 10^11 sets of
    placed players (an MTT player's game state hung the API on it). Past
    ``EXACT_WORK_LIMIT`` each stack gets its share of the chips times the prizes at stake;
    a table-sized field keeps the exact ICM."""
    stacks = [1000 + 10 * i for i in range(60)]
    prizes = [3000, 2000, 1500, 1000, 800, 600, 500, 400, 200]
    assert exact_work(60, 9) > EXACT_WORK_LIMIT
    equities = icm_or_chip_equities(stacks, prizes)
    total = sum(stacks)
    assert equities == pytest.approx([sum(prizes) * s / total for s in stacks])
    # A final table: exact, as before.
    table = [5000, 3000, 2000, 1000, 1000, 800, 700, 500, 300, 200]
    assert exact_work(10, 10) <= EXACT_WORK_LIMIT
    assert icm_or_chip_equities(table, [100] * 10) == icm_equities(table, [100] * 10)
    assert icm_or_chip_equities(table, prizes) == icm_equities(table, prizes)
