"""Blind levels: nice snapping, the parametric structure, legacy extrapolation and the cap."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.blinds import (
    MAX_BLIND_BIG,
    MAX_BLIND_SMALL,
    Blinds,
    blinds_at_level,
    legacy_blinds_at_level,
    resolve_blinds,
    round_to_nice_blind,
)
from domain.settings import BlindLevel, BlindStructure, validate_settings
from tests.domain.builders import valid_settings_dict


def nice_values(limit: int) -> list[int]:
    values = [1, 2, 3, 4, 5, 6, 8]
    scale = 10
    while scale <= limit:
        values += [
            int(Fraction(m) * scale) for m in ("1", "1.5", "2", "2.5", "3", "4", "5", "6", "8")
        ]
        scale *= 10
    return values


def structure(**kw: object) -> BlindStructure:
    base: dict[str, object] = {
        "starting_small_blind": 10,
        "increase_factor": 1.5,
        "level_duration_seconds": 60,
    }
    return BlindStructure.model_validate({**base, **kw})


# --- round_to_nice_blind ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "nice"),
    [
        (10, 10),
        (15, 15),
        (22.5, 25),  # tie between 20 and 25 rounds up
        (12.5, 15),  # tie between 10 and 15 rounds up
        (12.49, 10),
        (33.75, 30),
        (35, 40),  # tie between 30 and 40
        (50.625, 50),
        (70, 80),  # tie between 60 and 80
        (69.99, 60),
        (90, 100),  # tie between 80 and 100
        (89, 80),
        (175, 200),
        (1_234_567, 1_000_000),
        (Fraction(225, 10), 25),
    ],
)
def test_round_to_nice_blind(raw: float, nice: int) -> None:
    assert round_to_nice_blind(raw) == nice


@pytest.mark.parametrize(
    ("raw", "nice"),
    [
        (0, 1),
        (0.4, 1),
        (1, 1),
        (1.4, 1),
        (1.5, 2),
        (2.25, 2),
        (3.375, 3),
        (5.06, 5),
        (7, 8),
        (7.59, 8),
        (6.99, 6),
        (9, 10),
        (9.5, 10),
    ],
)
def test_below_ten_only_whole_chip_denominations(raw: float, nice: int) -> None:
    assert round_to_nice_blind(raw) == nice


@given(st.fractions(min_value=0, max_value=10**13))
def test_snapped_value_is_a_nice_denomination(raw: Fraction) -> None:
    assert round_to_nice_blind(raw) in set(nice_values(10**14))


@given(st.fractions(min_value=0, max_value=10**13), st.fractions(min_value=0, max_value=10**13))
def test_snapping_is_monotone(a: Fraction, b: Fraction) -> None:
    lo, hi = sorted((a, b))
    assert round_to_nice_blind(lo) <= round_to_nice_blind(hi)


@given(st.integers(min_value=1, max_value=10**13))
def test_snapping_picks_the_nearest(raw: int) -> None:
    got = round_to_nice_blind(raw)
    assert all(abs(raw - got) <= abs(raw - v) for v in nice_values(10**14))


def test_nice_values_are_fixed_points() -> None:
    assert all(round_to_nice_blind(v) == v for v in nice_values(10**12))


# --- the parametric structure ----------------------------------------------------------------


def test_issue_example_start_10_factor_1_5() -> None:
    sbs = [blinds_at_level(structure(), n).sb for n in range(8)]
    assert sbs == [10, 15, 25, 30, 50, 80, 100, 150]


def test_big_blind_is_twice_the_small_blind() -> None:
    assert all(
        blinds_at_level(structure(), n).bb == 2 * blinds_at_level(structure(), n).sb
        for n in range(60)
    )


def test_level_zero_is_verbatim_even_when_not_nice() -> None:
    assert blinds_at_level(structure(starting_small_blind=7), 0) == Blinds(7, 14, 0)


def test_raw_value_is_snapped_not_the_previous_snap() -> None:
    # Compounding snapped values would go 10 → 15 → 20 (15 × 1.5 = 22.5 → 25 here too) ...
    # the factor-1.3 case shows the difference: 10, 13→15, 16.9→15, 21.97→20, 28.56→30.
    sbs = [blinds_at_level(structure(increase_factor=1.3), n).sb for n in range(5)]
    assert sbs == [10, 15, 15, 20, 30]


def test_a_non_nice_start_is_never_undercut() -> None:
    s = structure(starting_small_blind=12, increase_factor=1.01)
    assert blinds_at_level(s, 1).sb == 12  # 12.12 snaps to 10; floored at the start


def test_antes_start_verbatim_then_grow_snapped() -> None:
    s = structure(ante_start_level=3, starting_ante=7, ante_increase_factor=1.5)
    antes = [blinds_at_level(s, n).ante for n in range(7)]
    assert antes == [0, 0, 0, 7, 10, 15, 25]


def test_no_ante_when_start_level_is_null_or_ante_is_zero() -> None:
    assert blinds_at_level(structure(starting_ante=50), 20).ante == 0
    assert blinds_at_level(structure(ante_start_level=0, starting_ante=0), 20).ante == 0


def test_flat_ante_factor_keeps_the_ante_verbatim() -> None:
    s = structure(ante_start_level=0, starting_ante=13)
    assert {blinds_at_level(s, n).ante for n in range(50)} == {13}


def test_values_cap_while_levels_keep_counting() -> None:
    s = structure(
        increase_factor=2.0, ante_start_level=0, starting_ante=1, ante_increase_factor=2.0
    )
    capped = Blinds(MAX_BLIND_SMALL, MAX_BLIND_BIG, MAX_BLIND_SMALL)
    assert blinds_at_level(s, 200) == capped
    assert blinds_at_level(s, 10**9) == capped
    assert blinds_at_level(s, 10**30) == capped


def test_huge_factor_does_not_overflow() -> None:
    s = structure(increase_factor=1e300)
    assert blinds_at_level(s, 5).sb == MAX_BLIND_SMALL


def test_negative_level_is_a_caller_bug() -> None:
    with pytest.raises(ValueError):
        blinds_at_level(structure(), -1)


structures = st.builds(
    dict,
    starting_small_blind=st.integers(min_value=1, max_value=MAX_BLIND_SMALL),
    increase_factor=st.floats(min_value=1.01, max_value=10.0)
    | st.floats(min_value=1.01, max_value=1e300),
    level_duration_seconds=st.just(60),
    ante_start_level=st.none() | st.integers(min_value=0, max_value=50),
    starting_ante=st.integers(min_value=0, max_value=MAX_BLIND_SMALL),
    ante_increase_factor=st.floats(min_value=1.0, max_value=10.0)
    | st.floats(min_value=1.0, max_value=1e300),
).map(BlindStructure.model_validate)


@given(structures, st.integers(min_value=0, max_value=3_000))
def test_blinds_never_decrease_and_never_pass_the_cap(s: BlindStructure, level: int) -> None:
    here, after = blinds_at_level(s, level), blinds_at_level(s, level + 1)
    assert here.sb <= after.sb and here.bb <= after.bb and here.ante <= after.ante
    assert 1 <= after.sb <= MAX_BLIND_SMALL
    assert after.bb == 2 * after.sb
    assert 0 <= after.ante <= MAX_BLIND_SMALL


# --- legacy lists ----------------------------------------------------------------------------


def levels(*rows: tuple[int, int, int]) -> list[BlindLevel]:
    return [BlindLevel(sb=sb, bb=bb, ante=ante) for sb, bb, ante in rows]


def test_legacy_levels_are_verbatim_in_range() -> None:
    rows = levels((10, 20, 0), (15, 30, 0), (25, 50, 5), (40, 80, 5))
    assert [legacy_blinds_at_level(rows, n) for n in range(4)] == [
        Blinds(10, 20, 0),
        Blinds(15, 30, 0),
        Blinds(25, 50, 5),
        Blinds(40, 80, 5),
    ]


def test_legacy_extrapolates_by_the_last_ratio_nice_snapped() -> None:
    rows = levels((10, 20, 0), (20, 40, 5))
    got = [legacy_blinds_at_level(rows, n) for n in range(2, 6)]
    assert got == [
        Blinds(40, 80, 10),
        Blinds(80, 150, 20),
        Blinds(150, 300, 40),
        Blinds(300, 600, 80),
    ]


def test_legacy_list_ending_in_equal_levels_stays_flat() -> None:
    rows = levels((10, 20, 0), (25, 50, 5), (25, 50, 5))
    assert legacy_blinds_at_level(rows, 10**6) == Blinds(25, 50, 5)


def test_single_level_list_grows_by_the_default_ratio() -> None:
    rows = levels((10, 20, 0))
    assert [legacy_blinds_at_level(rows, n).sb for n in range(5)] == [10, 15, 25, 30, 50]


def test_legacy_caps() -> None:
    rows = levels((10, 20, 1), (100, 200, 10))
    assert legacy_blinds_at_level(rows, 10**12) == Blinds(
        MAX_BLIND_SMALL, MAX_BLIND_BIG, MAX_BLIND_SMALL
    )


@st.composite
def legacy_lists(draw: st.DrawFn) -> list[BlindLevel]:
    count = draw(st.integers(min_value=1, max_value=6))
    sb, bb, ante = 1, 1, 0
    out = []
    for _ in range(count):
        sb = draw(st.integers(min_value=sb, max_value=max(sb, 10**6) * 3))
        bb = draw(st.integers(min_value=max(bb, sb), max_value=max(bb, sb) * 3))
        ante = draw(st.integers(min_value=ante, max_value=ante + 1000))
        out.append(BlindLevel(sb=sb, bb=bb, ante=ante))
    return out


@given(legacy_lists(), st.integers(min_value=0, max_value=5_000))
def test_legacy_never_decreases_never_passes_the_cap(rows: list[BlindLevel], level: int) -> None:
    here, after = legacy_blinds_at_level(rows, level), legacy_blinds_at_level(rows, level + 1)
    assert here.sb <= after.sb and here.bb <= after.bb and here.ante <= after.ante
    assert after.sb <= MAX_BLIND_SMALL and after.bb <= MAX_BLIND_BIG
    assert after.ante <= MAX_BLIND_SMALL and after.sb <= after.bb


# --- resolve_blinds --------------------------------------------------------------------------


def test_resolve_prefers_the_structure() -> None:
    s = validate_settings(valid_settings_dict(blindLevels=[{"sb": 1, "bb": 2}]))
    assert resolve_blinds(s, 2) == Blinds(25, 50, 0)


def test_resolve_falls_back_to_legacy() -> None:
    raw = valid_settings_dict(
        blindStructure=..., blindLevels=[{"sb": 1, "bb": 2}], levelDurationSeconds=60
    )
    assert resolve_blinds(validate_settings(raw), 0) == Blinds(1, 2, 0)


@given(st.integers(min_value=0, max_value=10**40))
def test_resolve_never_raises_for_any_level(level: int) -> None:
    s = validate_settings(valid_settings_dict())
    assert resolve_blinds(s, level).sb <= MAX_BLIND_SMALL
