"""The per-player tournament view: rank, big blinds, M-ratio, pay jump, ICM equity."""

from __future__ import annotations

import pytest

from domain.blinds import Blinds
from domain.icm import icm_is_exact
from domain.views import live_rank, m_ratio, my_view, pay_jump_to_next, stack_in_big_blinds


def test_live_rank_shares_ties() -> None:
    stacks = {"a": 100, "b": 300, "c": 300, "d": 50}
    assert [live_rank(stacks, e) for e in "abcd"] == [3, 1, 1, 4]


def test_stack_in_big_blinds() -> None:
    assert stack_in_big_blinds(1000, Blinds(25, 50)) == 20.0


def test_m_ratio_counts_an_ante_per_player_dealt_in() -> None:
    assert m_ratio(3000, Blinds(100, 200, 25), 8) == 3000 / 500
    assert m_ratio(3000, Blinds(100, 200), 8) == 10.0


def test_m_ratio_needs_someone_dealt_in() -> None:
    with pytest.raises(ValueError):
        m_ratio(3000, Blinds(100, 200), 0)


def test_pay_jump_including_the_bubble() -> None:
    amounts = [500, 300, 200]
    assert pay_jump_to_next(amounts, 1) == 0
    assert pay_jump_to_next(amounts, 3) == 100
    assert pay_jump_to_next(amounts, 4) == 200  # the bubble: from nothing to third
    with pytest.raises(ValueError):
        pay_jump_to_next(amounts, 0)


def test_my_view_wire_shape() -> None:
    view = my_view({"a": 6000, "b": 2000, "c": 2000}, "a", Blinds(100, 200, 0), [700, 300])
    wire = view.to_wire()
    assert set(wire) == {"rank", "stackInBigBlinds", "mRatio", "payJumpToNext", "icmEquity"}
    assert wire["rank"] == 1 and wire["payJumpToNext"] == 0
    assert wire["stackInBigBlinds"] == 30.0 and wire["mRatio"] == 20.0
    assert 0 < wire["icmEquity"] < 700


def test_my_view_equities_over_the_table_sum_to_the_prizes_at_stake() -> None:
    stacks = {"a": 6000, "b": 2000, "c": 1000, "d": 1000}
    total = sum(my_view(stacks, e, Blinds(100, 200), [500, 300, 200]).icm_equity for e in stacks)
    assert total == pytest.approx(1000, abs=0.05)


def test_icm_is_chip_equity_for_a_large_mtt_field_and_exact_for_a_table() -> None:
    """Exact ICM over 60 players with 9 paid would take about 10^11 steps: the view gives the
    chip equity of the prizes at stake instead (and is answered at once), a number as
    before, while rank, pay jump and M-ratio stay; a full table keeps its exact figure, and
    ``dealt_in`` sets the M-ratio's antes (an MTT's own table)."""
    field = {f"p{i}": 1000 + 10 * i for i in range(60)}
    amounts = [1819, 953, 682, 551, 474, 425, 389, 363, 344]
    view = my_view(field, "p59", Blinds(50, 100, 10), amounts, dealt_in=6)
    assert not icm_is_exact(60, len(amounts))
    chips = sum(field.values())
    assert view.icm_equity == round(sum(amounts) * field["p59"] / chips, 2)
    assert view.rank == 1 and view.pay_jump_to_next == 0
    assert view.m_ratio == round(m_ratio(field["p59"], Blinds(50, 100, 10), 6), 2)
    assert icm_is_exact(10, 3)
    table = {f"p{i}": 1000 for i in range(10)}
    assert my_view(table, "p0", Blinds(50, 100), [500, 300, 200]).icm_equity == 100.0
