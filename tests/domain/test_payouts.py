"""Payouts: paid places, basis points that sum to 10,000, legacy lists, pool conservation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, ErrorCode
from domain.game_state import tournament_parts
from domain.mtt.payouts import mtt_payouts
from domain.payouts import (
    TOTAL_BPS,
    paid_places,
    payout_amounts,
    payouts_for_field_size,
    prize_pool,
    resolve_payout_amounts,
    resolve_payouts,
    resolved_prize_structure,
)
from domain.settings import PayoutStructure, TournamentSettings, validate_settings
from tests.domain.builders import valid_settings_dict

DEFAULT = PayoutStructure()


def percents(field_size: int) -> list[float]:
    return [b / 100 for b in payouts_for_field_size(DEFAULT, field_size)]


def test_defaults_match_sng_convention() -> None:
    assert payouts_for_field_size(DEFAULT, 2) == [10_000]  # heads-up: winner takes all
    six = percents(6)
    assert len(six) == 2 and abs(six[0] - 65) < 1.5 and abs(six[1] - 35) < 1.5
    for field in (9, 10):
        nine = percents(field)
        assert len(nine) == 3
        assert [round(p / 5) * 5 for p in nine] == [50, 30, 20]


@pytest.mark.parametrize(
    ("field", "percent", "minimum", "paid"),
    [
        (1, 30, 1, 1),
        (5, 30, 1, 2),  # 1.5 rounds half up
        (10, 30, 1, 3),
        (10, 0, 1, 1),
        (10, 0, 4, 4),
        (3, 30, 5, 3),  # min paid clamps to the field
        (100, 15, 1, 15),
        (10, 100, 1, 10),
        (7, 50, 1, 4),  # 3.5 rounds half up
    ],
)
def test_paid_places(field: int, percent: float, minimum: int, paid: int) -> None:
    s = PayoutStructure(paid_places_percent=percent, min_paid_places=minimum)
    assert paid_places(s, field) == paid


def test_flat_structure_splits_evenly_with_dust_to_first() -> None:
    s = PayoutStructure(paid_places_percent=100, top_heaviness=0)
    assert payouts_for_field_size(s, 3) == [3334, 3333, 3333]


def test_field_size_below_one_is_refused() -> None:
    with pytest.raises(DomainError) as info:
        payouts_for_field_size(DEFAULT, 0)
    assert info.value.code is ErrorCode.INVALID_FIELD_SIZE


payout_structures = st.builds(
    dict,
    paid_places_percent=st.floats(min_value=0, max_value=100),
    top_heaviness=st.floats(min_value=0, max_value=50) | st.floats(min_value=0, max_value=1e300),
    min_paid_places=st.integers(min_value=1, max_value=20_000),
).map(PayoutStructure.model_validate)


@settings(max_examples=300)
@given(payout_structures, st.integers(min_value=1, max_value=10_000))
def test_bps_sum_to_10000_at_every_field_size(s: PayoutStructure, field: int) -> None:
    bps = payouts_for_field_size(s, field)
    assert sum(bps) == TOTAL_BPS
    assert len(bps) == paid_places(s, field)
    assert all(b >= 0 for b in bps)
    assert bps == sorted(bps, reverse=True), "a deeper place never pays more"


def test_bps_sum_to_10000_for_every_field_size_up_to_10000_with_defaults() -> None:
    assert all(sum(payouts_for_field_size(DEFAULT, n)) == TOTAL_BPS for n in range(1, 10_001))


# --- settings-level resolution ---------------------------------------------------------------


def settings_with(**overrides: Any) -> Any:
    return validate_settings(valid_settings_dict(**overrides))


def test_resolve_uses_the_default_structure_when_no_source_is_given() -> None:
    assert resolve_payouts(settings_with(), 9) == payouts_for_field_size(DEFAULT, 9)


def test_resolve_prefers_the_structure_over_the_legacy_list() -> None:
    s = settings_with(
        payoutStructure={"paidPlacesPercent": 100, "topHeaviness": 0},
        prizeStructure=[{"position": 1, "percent": 100}],
    )
    assert len(resolve_payouts(s, 4)) == 4


def test_legacy_prize_structure_is_honored_verbatim() -> None:
    prizes = [
        {"position": 1, "percent": 50},
        {"position": 2, "percent": 30},
        {"position": 3, "percent": 20},
    ]
    assert resolve_payouts(settings_with(prizeStructure=prizes), 9) == [5000, 3000, 2000]


def test_legacy_fractional_percents_floor_with_dust_to_first() -> None:
    prizes = [
        {"position": 1, "percent": 33.33335},
        {"position": 2, "percent": 33.33335},
        {"position": 3, "percent": 33.3333},
    ]
    assert resolve_payouts(settings_with(prizeStructure=prizes), 9) == [3334, 3333, 3333]


def test_legacy_places_beyond_a_small_field_fold_into_first() -> None:
    prizes = [
        {"position": 1, "percent": 50},
        {"position": 2, "percent": 30},
        {"position": 3, "percent": 20},
    ]
    assert resolve_payouts(settings_with(prizeStructure=prizes), 2) == [7000, 3000]


def test_resolved_wire_shape() -> None:
    """The seed's type: ``prizeStructure: Array<{ position: number; share: number }>``, the
    share a percentage of the pool; ``percent`` (the same number) stays one release for the
    clients that read it (CHANGELOG.md)."""
    prizes = [{"position": 1, "percent": 65.5}, {"position": 2, "percent": 34.5}]
    wire = [p.to_wire() for p in resolved_prize_structure(settings_with(prizeStructure=prizes), 9)]
    assert wire == [
        {"position": 1, "share": 65.5, "percent": 65.5},
        {"position": 2, "share": 34.5, "percent": 34.5},
    ]


def test_the_schedule_on_the_wire_carries_shares_that_sum_to_100() -> None:
    parts = tournament_parts(
        settings_with(),
        state="playing",
        level=1,
        play_start_ms=0,
        registered_count=9,
        field_size=9,
    )
    places = [p.to_wire() for p in parts.prize_structure]
    assert [p["position"] for p in places] == list(range(1, len(places) + 1))
    assert sum(p["share"] for p in places) == pytest.approx(100)


def test_pool_comes_from_the_sealed_field_net_of_rake() -> None:
    s = settings_with(entryFee=110, rakeFee=10, seats=9)
    assert prize_pool(s, 9) == 900
    assert prize_pool(s, 6) == 600


@pytest.mark.parametrize("field", [0, 10])
def test_pool_refuses_a_field_outside_the_seats(field: int) -> None:
    with pytest.raises(DomainError) as info:
        prize_pool(settings_with(seats=9), field)
    assert (info.value.code, info.value.field) == (ErrorCode.INVALID_FIELD_SIZE, "fieldSize")


def test_amounts() -> None:
    assert payout_amounts([5000, 3000, 2000], 901) == [451, 270, 180]
    assert payout_amounts([10_000], 7) == [7]
    assert resolve_payout_amounts(settings_with(entryFee=100, rakeFee=0, seats=2), 2) == [200]


def test_amounts_refuse_a_distribution_that_does_not_sum() -> None:
    with pytest.raises(ValueError):
        payout_amounts([5000, 4000], 100)


@given(
    st.integers(min_value=1, max_value=10_000),
    st.integers(min_value=0, max_value=10**15),
    payout_structures,
)
def test_pool_conservation(field: int, pool: int, s: PayoutStructure) -> None:
    bps = payouts_for_field_size(s, field)
    amounts = payout_amounts(bps, pool)
    assert sum(amounts) == pool
    assert all(a >= 0 for a in amounts)
    assert amounts == sorted(amounts, reverse=True)


fee_and_rake = st.integers(min_value=1, max_value=10**6).flatmap(
    lambda fee: st.tuples(st.just(fee), st.integers(min_value=0, max_value=fee - 1))
)


@given(st.integers(min_value=2, max_value=10), fee_and_rake)
def test_settings_pool_conservation(seats: int, fee_rake: tuple[int, int]) -> None:
    fee, rake = fee_rake
    s = settings_with(seats=seats, entryFee=fee, rakeFee=rake)
    for field in range(1, seats + 1):
        assert sum(resolve_payout_amounts(s, field)) == (fee - rake) * field


# -- an MTT field (issue 31) -------------------------------------------------------------


def _mtt(**overrides: object) -> TournamentSettings:
    return validate_settings(valid_settings_dict(seats=6, maxEntrants=200, **overrides))


@pytest.mark.parametrize("field", [7, 20, 60, 200])
def test_an_mtt_field_pays_the_mtt_table_in_whole_chips(field: int) -> None:
    s = _mtt()
    pool = prize_pool(s, field)
    assert pool == 100 * field
    amounts = resolve_payout_amounts(s, field)
    assert amounts == mtt_payouts(field_size=field, pool=pool)
    assert sum(amounts) == pool
    assert sum(resolve_payouts(s, field)) == TOTAL_BPS
    assert len(resolve_payouts(s, field)) == len(amounts)


def test_an_mtt_with_the_operators_structure_pays_that_structure() -> None:
    s = _mtt(payoutStructure={"paidPlacesPercent": 50})
    assert resolve_payouts(s, 60) == payouts_for_field_size(s.payout_structure, 60)  # type: ignore[arg-type]
    assert sum(resolve_payout_amounts(s, 60)) == prize_pool(s, 60)


def test_an_mtt_refuses_only_a_field_above_its_bound() -> None:
    s = _mtt()
    with pytest.raises(DomainError) as info:
        prize_pool(s, 201)
    assert info.value.code is ErrorCode.INVALID_FIELD_SIZE
