"""Finishing places: same-hand busts, ties, force-end, final standings, tied prize splits."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.standings import (
    Finish,
    final_standings,
    force_end_ranking,
    order_busts,
    rank_by_chips,
    split_prizes,
)


def places(finishes: tuple[Finish, ...]) -> list[tuple[str, int, int]]:
    return [(f.entrant, f.place, f.rank) for f in finishes]


def test_a_single_bust_takes_the_worst_open_place() -> None:
    assert places(order_busts({"x": 120}, alive_before=9)) == [("x", 9, 9)]


def test_multi_way_bust_deeper_pre_hand_stack_finishes_higher() -> None:
    got = order_busts([("a", 100), ("b", 900), ("c", 400)], alive_before=5)
    assert places(got) == [("b", 3, 3), ("c", 4, 4), ("a", 5, 5)]


def test_equal_pre_hand_stacks_tie() -> None:
    got = order_busts([("a", 400), ("b", 400)], alive_before=4)
    assert places(got) == [("a", 3, 3), ("b", 4, 3)]


def test_busts_cannot_outnumber_the_living() -> None:
    with pytest.raises(ValueError):
        order_busts({"a": 1, "b": 2}, alive_before=1)


def test_an_entrant_listed_twice_is_a_caller_bug() -> None:
    with pytest.raises(ValueError):
        order_busts([("a", 1), ("a", 2)], alive_before=5)


def test_force_end_ranks_live_seats_by_stack_with_ties() -> None:
    got = force_end_ranking({"a": 2000, "b": 5000, "c": 2000, "d": 1000})
    assert places(got) == [("b", 1, 1), ("a", 2, 2), ("c", 3, 2), ("d", 4, 4)]


def test_a_whole_tournament_assembles_into_final_standings() -> None:
    out: list[Finish] = []
    out += order_busts({"e": 50}, alive_before=5)
    out += order_busts({"c": 300, "d": 300}, alive_before=4)
    out += order_busts({"b": 10}, alive_before=2)
    out += force_end_ranking({"a": 5000})
    standings = final_standings(out, field_size=5)
    assert places(standings) == [("a", 1, 1), ("b", 2, 2), ("c", 3, 3), ("d", 4, 3), ("e", 5, 5)]
    awards = split_prizes(standings, [500, 300, 201])
    assert [(a.entrant, a.amount) for a in awards] == [
        ("a", 500),
        ("b", 300),
        ("c", 101),
        ("d", 100),
        ("e", 0),
    ]


@pytest.mark.parametrize(
    "finishes",
    [
        [Finish("a", 1, 1), Finish("b", 3, 3)],
        [Finish("a", 1, 1), Finish("a", 2, 2)],
        [Finish("a", 1, 1)],
    ],
)
def test_final_standings_must_cover_every_place_once(finishes: list[Finish]) -> None:
    with pytest.raises(ValueError):
        final_standings(finishes, field_size=2)


def test_a_tie_straddling_the_bubble_splits_the_last_paid_prize() -> None:
    ties = rank_by_chips({"a": 9, "b": 5, "c": 5}, best_place=1)
    assert [a.amount for a in split_prizes(ties, [70, 31])] == [70, 16, 15]


def test_odd_chips_go_to_the_higher_places() -> None:
    ties = rank_by_chips({"a": 1, "b": 1, "c": 1, "d": 1}, best_place=1)
    assert [a.amount for a in split_prizes(ties, [50, 30, 15, 7])] == [26, 26, 25, 25]


chip_maps = st.dictionaries(
    st.text(alphabet="abcdefghij", min_size=1, max_size=3),
    st.integers(min_value=0, max_value=20),  # small values so ties are common
    min_size=1,
    max_size=10,
)


@given(chip_maps, st.lists(st.integers(min_value=0, max_value=10**9), max_size=10))
def test_ranking_and_splitting_conserve_places_and_chips(
    chips: dict[str, int], amounts: list[int]
) -> None:
    ranked = force_end_ranking(chips)
    standings = final_standings(ranked, field_size=len(chips))
    for better, worse in pairwise(standings):
        assert chips[better.entrant] >= chips[worse.entrant]
        assert (better.rank == worse.rank) == (chips[better.entrant] == chips[worse.entrant])
    awards = split_prizes(standings, amounts)
    assert sum(a.amount for a in awards) == sum(amounts[: len(chips)])
    for group_rank in {f.rank for f in standings}:
        shares = [a.amount for a, f in zip(awards, standings, strict=True) if f.rank == group_rank]
        assert max(shares) - min(shares) <= 1
        assert shares == sorted(shares, reverse=True), "odd chips go to the higher places"
