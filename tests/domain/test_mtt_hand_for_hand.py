"""Hand-for-hand on the bubble and the places of one hand-for-hand round (domain/mtt)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.mtt.hand_for_hand import RoundBust, hand_for_hand, order_round_busts, place_round
from domain.mtt.payouts import mtt_payouts
from domain.standings import Finish, final_standings, order_busts, split_prizes


def places(finishes: tuple[Finish, ...]) -> list[tuple[str, int, int]]:
    return [(f.entrant, f.place, f.rank) for f in finishes]


def test_hand_for_hand_only_while_the_next_bust_is_the_bubble_on_several_tables() -> None:
    assert hand_for_hand(players_left=31, paid_places=30, tables_left=4)
    assert not hand_for_hand(players_left=32, paid_places=30, tables_left=4)
    assert not hand_for_hand(players_left=30, paid_places=30, tables_left=4)
    assert not hand_for_hand(players_left=31, paid_places=30, tables_left=1)
    with pytest.raises(ValueError):
        hand_for_hand(players_left=5, paid_places=0, tables_left=2)


def test_bubble_busts_at_two_tables_tie_and_split_the_min_cash() -> None:
    # 31 left, 30 paid: one bust at each of two tables in one round. They tie for 30th, so the
    # 30th prize (31st pays nothing) is split; the odd chip goes to the one listed first.
    got = order_round_busts([RoundBust("a", 1, 5000), RoundBust("b", 3, 200)], alive_before=31)
    assert places(got) == [("a", 30, 30), ("b", 31, 30)]
    amounts = [1000] * 29 + [151]
    assert [(x.entrant, x.amount) for x in split_prizes(got, amounts)] == [("a", 76), ("b", 75)]


def test_same_table_busts_finish_by_pre_hand_stack_and_equal_stacks_tie() -> None:
    got = order_round_busts(
        [RoundBust("a", 2, 300), RoundBust("b", 2, 900), RoundBust("c", 2, 300)],
        alive_before=12,
    )
    assert places(got) == [("b", 10, 10), ("a", 11, 11), ("c", 12, 11)]


def test_mixed_round_ranks_in_tiers_of_each_tables_deepest_bust() -> None:
    # Table 1 loses two (deeper a, then b), table 2 one (c): a and c are each their table's
    # deepest bust and tie for the best place; b finishes below a, as the same-table rule says.
    got = order_round_busts(
        [RoundBust("a", 1, 800), RoundBust("b", 1, 100), RoundBust("c", 2, 50)],
        alive_before=20,
    )
    assert places(got) == [("a", 18, 18), ("c", 19, 18), ("b", 20, 20)]


def test_bad_rounds_are_caller_bugs() -> None:
    with pytest.raises(ValueError):
        order_round_busts([RoundBust("a", 1, 5), RoundBust("a", 2, 5)], alive_before=9)
    with pytest.raises(ValueError):
        order_round_busts([RoundBust("a", 1, 0)], alive_before=9)
    with pytest.raises(ValueError):
        order_round_busts([RoundBust("a", 1, 5), RoundBust("b", 2, 5)], alive_before=1)


@given(stacks=st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=8))
def test_a_round_at_one_table_ranks_like_any_same_hand_bust(stacks: list[int]) -> None:
    busts = [RoundBust(f"p{i}", 1, s) for i, s in enumerate(stacks)]
    alive = len(stacks) + 3
    assert order_round_busts(busts, alive_before=alive) == order_busts(
        [(b.entrant, b.pre_hand_stack) for b in busts], alive_before=alive
    )


@given(
    busts=st.lists(
        st.tuples(st.integers(min_value=1, max_value=4), st.integers(min_value=1, max_value=9)),
        min_size=1,
        max_size=10,
    ),
    extra=st.integers(min_value=0, max_value=5),
    amounts=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=20),
)
def test_a_round_covers_the_worst_places_keeps_same_table_order_and_pays_every_chip(
    busts: list[tuple[int, int]], extra: int, amounts: list[int]
) -> None:
    round_ = [RoundBust(f"p{i}", t, s) for i, (t, s) in enumerate(busts)]
    alive = len(round_) + extra
    got = order_round_busts(round_, alive_before=alive)
    assert sorted(f.place for f in got) == list(range(extra + 1, alive + 1))
    by = {f.entrant: f for f in got}
    for x in round_:
        for y in round_:
            if x.table_id == y.table_id and x.pre_hand_stack > y.pre_hand_stack:
                assert by[x.entrant].rank < by[y.entrant].rank
            if x.table_id == y.table_id and x.pre_hand_stack == y.pre_hand_stack:
                assert by[x.entrant].rank == by[y.entrant].rank
    covered = sum(amounts[p - 1] for p in range(extra + 1, alive + 1) if p <= len(amounts))
    assert sum(a.amount for a in split_prizes(got, amounts)) == covered


@given(
    busts=st.lists(
        st.tuples(st.integers(min_value=1, max_value=4), st.integers(min_value=1, max_value=9)),
        min_size=1,
        max_size=8,
    ),
    order=st.randoms(use_true_random=False),
)
def test_a_closed_round_is_placed_the_same_whichever_table_reported_first(
    busts: list[tuple[int, int]], order: random.Random
) -> None:
    """The table manager collects a round's busts in the order its tables report; the
    places, ranks and so the odd chips of a split must not depend on it."""
    round_ = [RoundBust(f"p{i}", t, s) for i, (t, s) in enumerate(busts)]
    reports: dict[int, list[RoundBust]] = {}
    for bust in round_:
        reports.setdefault(bust.table_id, []).append(bust)
    tables = sorted(reports)
    order.shuffle(tables)
    as_reported = [bust for t in tables for bust in reports[t]]
    assert place_round(as_reported, alive_after=3) == place_round(round_, alive_after=3)
    assert place_round(round_, alive_after=3) == order_round_busts(
        sorted(round_, key=lambda b: b.table_id), alive_before=3 + len(round_)
    )


@given(
    field=st.integers(min_value=8, max_value=60),
    rounds=st.lists(
        st.lists(
            st.tuples(st.integers(min_value=1, max_value=6), st.integers(min_value=1, max_value=9)),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_a_field_busting_in_rounds_is_placed_once_each_and_paid_the_pool(
    field: int, rounds: list[list[tuple[int, int]]]
) -> None:
    """Constructed tournaments: players bust in hand-for-hand rounds (any table, any stack)
    until one is left; every place is taken once, ties share a rank, and the split pays
    exactly the pool (no place paid twice, no chip unpaid)."""
    alive = [f"e{i}" for i in range(field)]
    finishes: list[Finish] = []
    for spec in rounds:
        take = min(len(spec), len(alive) - 1)
        if take == 0:
            break
        busted, alive = alive[-take:], alive[:-take]
        round_ = [RoundBust(p, t, s) for p, (t, s) in zip(busted, spec, strict=False)]
        finishes.extend(place_round(round_, alive_after=len(alive)))
    finishes.extend(
        order_busts([(p, 1) for p in alive[1:]], alive_before=len(alive)) if len(alive) > 1 else ()
    )
    finishes.append(Finish(alive[0], 1, 1))
    standings = final_standings(finishes, field_size=field)
    pool = field * 100
    awards = split_prizes(standings, mtt_payouts(field_size=field, pool=pool))
    assert sum(a.amount for a in awards) == pool
    assert sorted(a.place for a in awards) == list(range(1, field + 1))
    rank_of = {f.entrant: f.rank for f in standings}
    for rank in set(rank_of.values()):  # a tie's members are paid within a chip of each other
        tied = [a.amount for a in awards if rank_of[a.entrant] == rank]
        assert max(tied) - min(tied) <= 1
