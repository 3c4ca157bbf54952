"""MTT seating and balancing (domain/mtt): the TDA rules on examples, and the seat and chip
invariants over whole random tournaments (late entrants, re-entries, busts at every boundary).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from itertools import count

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.holdem.positions import ButtonPositions, first_positions, next_positions
from domain.mtt.balancing import (
    BoundaryPlan,
    Move,
    MoveReason,
    next_big_blind,
    plan_boundary,
    worst_seat,
)
from domain.mtt.seating import (
    Table,
    seat_field,
    seat_late_entrant,
    table_sizes,
    tables_needed,
)

START = 1_500


def counting() -> object:
    draws = count()
    return lambda k: next(draws) % k


def apply_moves(tables: Sequence[Table], moves: Sequence[Move]) -> dict[int, dict[int, str]]:
    """Apply a boundary's moves the way the plan says: everyone up, then everyone down,
    checking that each mover was where the move says and lands on an empty seat."""
    seated = {t.table_id: dict(t.seats) for t in tables}
    assert len({m.entrant for m in moves}) == len(moves), "a player moves twice"
    assert len({(m.to_table, m.to_seat) for m in moves}) == len(moves), "two moves, one seat"
    for m in moves:
        assert seated[m.from_table].get(m.from_seat) == m.entrant, m
        del seated[m.from_table][m.from_seat]
    for m in moves:
        target = seated.setdefault(m.to_table, {})
        assert m.to_seat not in target, f"{m} lands on an occupied seat"
        target[m.to_seat] = m.entrant
    return {tid: s for tid, s in seated.items() if s}


def check_field(tables: Sequence[Table], alive: set[str], seats: int) -> None:
    where = [p for t in tables for p in t.seats.values()]
    assert sorted(where) == sorted(alive), "a live player is on no table or on two"
    sizes = [t.players for t in tables]
    assert all(0 < n <= seats for n in sizes)
    assert all(0 <= s < seats for t in tables for s in t.seats)
    assert len(tables) == tables_needed(len(alive), seats), "not the fewest tables"
    if len(tables) > 1:
        assert max(sizes) - min(sizes) <= 1, sizes


# --- examples: TDA Rules 7, 8, 10, 11, 12 ------------------------------------------------


def test_the_field_sits_at_the_fewest_tables_sizes_within_one() -> None:
    assert table_sizes(10, 9) == [5, 5]
    assert table_sizes(60, 9) == [9, 9, 9, 9, 8, 8, 8]
    tables = seat_field([f"p{i}" for i in range(60)], seats=9, randbelow=random.Random(1).randrange)
    check_field(tables, {f"p{i}" for i in range(60)}, 9)


def test_two_seat_tables_cannot_run_a_multi_table_field() -> None:
    with pytest.raises(ValueError):
        table_sizes(3, 2)
    assert table_sizes(2, 2) == [2]


def test_a_late_entrant_sits_at_a_table_with_the_fewest_players_drawn_among_ties() -> None:
    tables = [
        Table(1, {0: "a", 1: "b", 2: "c"}),
        Table(2, {0: "d", 1: "e"}),
        Table(3, {0: "f", 2: "g"}),
    ]
    # The pool is the open seats of tables 2 and 3 (seats 2, 3 and 1, 3): four equal draws.
    got = {
        (p.table_id, p.seat)
        for k in range(4)
        for p in [seat_late_entrant(tables, "z", seats=4, randbelow=lambda n, k=k: k)]
    }
    assert got == {(2, 2), (2, 3), (3, 1), (3, 3)}


def test_a_late_entrant_between_the_button_and_the_small_blind_waits_for_the_button() -> None:
    # Next hand at table 1: button 0, small blind 2, big blind 3. Open seats 1 and 5.
    table = Table(1, {0: "a", 2: "b", 3: "c", 4: "d"}, ButtonPositions(4, 0, 2))
    first = seat_late_entrant([table], "z", seats=6, randbelow=lambda n: 0)
    last = seat_late_entrant([table], "z", seats=6, randbelow=lambda n: n - 1)
    assert (first.seat, first.waits) == (1, True)
    assert (last.seat, last.waits) == (5, False)


def test_a_late_entrant_opens_a_table_when_every_table_is_full() -> None:
    full = [Table(1, {0: "a", 1: "b", 2: "c"}), Table(2, {0: "d", 1: "e", 2: "f"})]
    placed = seat_late_entrant(full, "z", seats=3, randbelow=lambda n: 0)
    assert (placed.table_id, placed.opens_table) == (3, True)
    with pytest.raises(ValueError):
        seat_late_entrant(full, "a", seats=3, randbelow=lambda n: 0)


def test_the_player_who_is_big_blind_next_moves_to_the_worst_position() -> None:
    # Table 1 (6 players): last hand button 0, SB 1, BB 2, so seat 3 is big blind next.
    long_ = Table(1, {s: f"a{s}" for s in range(6)}, ButtonPositions(0, 1, 2))
    # Table 2 (4 players, seats 0, 1, 4, 5): last BB was seat 1, so seat 2 is the open seat
    # the big blind reaches first: the mover posts the big blind there at once.
    short = Table(2, {0: "b0", 1: "b1", 4: "b4", 5: "b5"}, ButtonPositions(5, 0, 1))
    plan = plan_boundary([long_, short], seats=6, randbelow=lambda n: 0)
    assert plan.moves == (Move("a3", 1, 3, 2, 2, MoveReason.BALANCE),)
    table2 = plan.tables[1]
    assert table2.last_hand is not None
    upcoming = next_positions(table2.last_hand, list(table2.seats), 6)
    assert upcoming.big_blind == 2  # a single big blind, never the small blind
    assert plan.waits == frozenset()


def test_the_worst_position_is_never_the_small_blind() -> None:
    # The big blind of the last hand (seat 2) busted: its empty seat is next hand's (dead)
    # small blind, so the mover goes to seat 3, the next big blind, not to seat 2.
    table = Table(1, {0: "a", 1: "b", 4: "c"}, ButtonPositions(0, 1, 2))
    assert worst_seat(table, 6, lambda n: 0) == 3
    assert next_big_blind(table, 6) == 4


def test_two_moves_from_one_table_take_its_next_two_big_blinds() -> None:
    long_ = Table(1, {s: f"a{s}" for s in range(8)}, ButtonPositions(0, 1, 2))
    short = Table(2, {0: "b0", 1: "b1", 2: "b2", 3: "b3"}, ButtonPositions(0, 1, 2))
    plan = plan_boundary([long_, short], seats=8, randbelow=lambda n: 0)
    assert [(m.entrant, m.to_seat) for m in plan.moves] == [("a3", 4), ("a4", 5)]
    assert [t.players for t in plan.tables] == [6, 6]


def test_the_highest_numbered_table_breaks_first_into_the_short_tables() -> None:
    t1 = Table(1, {0: "a", 1: "b", 2: "c"}, ButtonPositions(0, 1, 2))
    t2 = Table(2, {0: "d", 1: "e"}, ButtonPositions(0, 0, 1))
    t3 = Table(3, {0: "f", 1: "g", 2: "h"}, ButtonPositions(0, 1, 2))
    plan = plan_boundary([t1, t2, t3], seats=4, randbelow=random.Random(3).randrange)
    assert {m.from_table for m in plan.moves} == {3}
    assert {m.reason for m in plan.moves} == {MoveReason.BREAK}
    assert [t.table_id for t in plan.tables] == [1, 2]
    assert sorted(t.players for t in plan.tables) == [4, 4]


def test_the_final_table_forms_when_the_field_fits_one_table_with_seats_redrawn() -> None:
    t1 = Table(1, {0: "a", 3: "b", 5: "c"}, ButtonPositions(0, 3, 5))
    t2 = Table(2, {1: "d", 2: "e"}, ButtonPositions(1, 1, 2))
    plan = plan_boundary([t1, t2], seats=6, randbelow=counting())  # type: ignore[arg-type]
    assert [t.table_id for t in plan.tables] == [1]
    assert plan.tables[0].last_hand is None  # the button is drawn afresh
    assert {m.reason for m in plan.moves} == {MoveReason.FINAL}
    assert {m.entrant for m in plan.moves} >= {"d", "e"}
    assert sorted(apply_moves([t1, t2], plan.moves)[1].values()) == ["a", "b", "c", "d", "e"]


def test_a_broken_table_player_seated_between_button_and_small_blind_waits() -> None:
    # Table 1's last hand: button 4, small blind 0, big blind 2 (seat 1 emptied earlier), so
    # its next hand is button 0, small blind 2, big blind 3: open seat 1 lies between the
    # button and the small blind (TDA Rule 10: dealt in "except between the small blind and
    # button"), open seat 5 does not.
    t1 = Table(1, {0: "a", 2: "b", 3: "c", 4: "d"}, ButtonPositions(4, 0, 2))
    t2 = Table(2, {0: "e", 1: "f", 2: "g", 3: "h"}, ButtonPositions(0, 1, 2))
    t3 = Table(3, {0: "x"}, ButtonPositions(0, 0, 1))
    plan = plan_boundary([t1, t2, t3], seats=6, randbelow=lambda n: 0)
    assert plan.moves == (Move("x", 3, 0, 1, 1, MoveReason.BREAK),)
    assert plan.waits == frozenset({"x"})
    other = plan_boundary([t1, t2, t3], seats=6, randbelow=lambda n: n - 1)
    assert other.moves == (Move("x", 3, 0, 2, 5, MoveReason.BREAK),)
    assert other.waits == frozenset()


def test_bad_input_is_a_caller_bug() -> None:
    with pytest.raises(ValueError):
        plan_boundary([Table(1, {0: "a"}), Table(2, {0: "a"})], seats=3, randbelow=lambda n: 0)
    with pytest.raises(ValueError):
        plan_boundary([Table(1, {0: "a"}), Table(1, {1: "b"})], seats=3, randbelow=lambda n: 0)
    with pytest.raises(ValueError):
        plan_boundary([Table(1, {5: "a"})], seats=3, randbelow=lambda n: 0)


# --- the invariants over whole tournaments ------------------------------------------------


def deal_one_hand(table: Table, seats: int, rnd: random.Random) -> Table:
    live = sorted(table.seats)
    if len(live) < 2:
        return table
    if table.last_hand is None:
        return replace(table, last_hand=first_positions(live, seats, rnd.choice(live)))
    return replace(table, last_hand=next_positions(table.last_hand, live, seats))


@settings(max_examples=150, deadline=None)
@given(
    seats=st.integers(min_value=3, max_value=10),
    entrants=st.integers(min_value=2, max_value=120),
    late_boundaries=st.integers(min_value=0, max_value=6),
    rnd=st.randoms(use_true_random=False),
)
def test_every_boundary_keeps_every_player_on_one_table_and_every_chip(
    seats: int, entrants: int, late_boundaries: int, rnd: random.Random
) -> None:
    """Late entrants and re-entries arrive during the first boundaries; every hand some
    players bust. After every boundary's moves: each live entry on exactly one table, no
    table above ``seats``, the fewest tables, sizes within one, and the chips of all stacks
    equal to entries × starting stack."""
    players = [f"p{i}" for i in range(entrants)]
    stacks = dict.fromkeys(players, START)
    entries = entrants
    tables = seat_field(players, seats=seats, randbelow=rnd.randrange)
    check_field(tables, set(stacks), seats)
    boundary = 0
    while len(stacks) > 1:
        boundary += 1
        tables = [deal_one_hand(t, seats, rnd) for t in tables]
        busted: list[str] = []
        for t in tables:
            at_table = list(t.seats.values())
            if len(at_table) < 2:
                continue
            winner = rnd.choice(at_table)
            for p in at_table:
                if p == winner:
                    continue
                lost = stacks[p] if rnd.random() < 0.3 else rnd.randrange(stacks[p])
                stacks[p] -= lost
                stacks[winner] += lost
                if stacks[p] == 0:
                    busted.append(p)
        for p in busted:
            del stacks[p]
        standing = [
            replace(t, seats={s: p for s, p in t.seats.items() if p in stacks}) for t in tables
        ]
        if boundary <= late_boundaries:
            for who in [f"late{boundary}", *(f"{p}#re{boundary}" for p in busted[:2])]:
                placed = seat_late_entrant(standing, who, seats=seats, randbelow=rnd.randrange)
                stacks[who] = START
                entries += 1
                grown = {t.table_id: t for t in standing}
                base = grown.get(placed.table_id, Table(placed.table_id))
                assert placed.seat not in base.seats
                assert placed.opens_table == (placed.table_id not in grown)
                if not placed.opens_table:
                    assert base.players == min(t.players for t in standing)
                grown[placed.table_id] = replace(base, seats={**base.seats, placed.seat: who})
                standing = [grown[k] for k in sorted(grown)]
        plan: BoundaryPlan = plan_boundary(standing, seats=seats, randbelow=rnd.randrange)
        applied = apply_moves(standing, plan.moves)
        assert applied == {t.table_id: dict(t.seats) for t in plan.tables}
        assert plan.waits <= {m.entrant for m in plan.moves}
        for t in plan.tables:
            if t.last_hand is not None and t.players >= 2:
                upcoming = next_positions(t.last_hand, list(t.seats), seats)
                posts = {upcoming.button, upcoming.small_blind, upcoming.big_blind}
                assert not {p for s, p in t.seats.items() if s in posts} & plan.waits
        check_field(plan.tables, set(stacks), seats)
        assert sum(stacks.values()) == entries * START
        tables = list(plan.tables)
    assert len(tables) == 1


def test_an_arrival_at_a_heads_up_table_is_dealt_in() -> None:
    # Table 3 breaks; its player draws seat 3 at table 1, which is then heads-up: he is big
    # blind next (the first occupied seat after the last big blind, seat 1) and "a" has the
    # button, which heads-up is also the small blind. No seat lies between them: nobody waits.
    t1 = Table(1, {0: "a"}, ButtonPositions(3, 3, 1))
    t2 = Table(2, {0: "b", 1: "c", 2: "d"}, ButtonPositions(0, 1, 2))
    t3 = Table(3, {2: "x"}, ButtonPositions(2, 2, 0))
    plan = plan_boundary([t1, t2, t3], seats=4, randbelow=lambda n: n - 1)
    assert plan.moves == (Move("x", 3, 2, 1, 3, MoveReason.BREAK),)
    heads_up = plan.tables[0]
    assert heads_up.last_hand is not None
    assert next_positions(heads_up.last_hand, list(heads_up.seats), 4) == ButtonPositions(0, 0, 3)
    assert plan.waits == frozenset()
