"""Moving players at a hand boundary: breaking tables, balancing, the final table (TDA 10-12).

:func:`plan_boundary` takes every table as it stands after a hand boundary (busted players
already gone) and returns the moves that bring the field back to the fewest tables, their
sizes differing by at most one, as plain data. Three kinds of move, in this order:

1. **Final table** (TDA Rule 12: a final table seats as many as a full table of the event).
   When the field fits one table and more than one is left, every player's seat is redrawn at
   random at table 1 (the lowest number still running); the final table deals its first hand
   with a freshly drawn button, so ``last_hand`` is ``None``.
2. **Break** (TDA Rule 10). While the field fits fewer tables than are running, the table
   with the highest number breaks (a fixed, predetermined order: tables break from the highest
   number down, so the final table is table 1; several break at one boundary when many
   busted, and nobody is seated at a table that breaks at the same boundary, so nobody moves
   twice). Its players, in random order, each draw a random open seat among the tables with
   the fewest players (TDA's "2-step random process", table then seat, drawn from the short
   tables so the break itself keeps sizes within one).
   A seat may be a blind or the button.
3. **Balance** (TDA Rule 11). While the longest and shortest tables differ by two or more, the
   player who would be big blind next at the longest table (ties: the highest number, the
   predetermined procedure of Rule 11C) moves to the *worst position* at the shortest table
   (ties: the lowest number): the first open seat clockwise after the seat that posted the last
   big blind, so the mover posts the big blind there as soon as possible, immediately when the
   seat lies before the next player (Rule 11A: "including single big blind if available, even
   if that means the seat is the big blind twice"; never the small blind).

Blinds owed on arrival: none are carried over. A tournament has no missed-blind debt; a moved
player takes the seat's rights and duties (TDA Rule 10), and the dead-button rule
(``domain/holdem/positions.py``) makes the big blind move to the next occupied seat, so a
balanced player pays the big blind he left at the table he joins. An arrival whose seat lies
strictly between the next hand's button and small blind is not dealt in until the button
passes (TDA Rules 8 and 10: "dealt in except between the small blind and button"); the plan
names them in ``waits``.

Apply a plan's moves together: stand every mover up, then seat every mover. No two moves share
a player or a target seat, and every target seat is empty once the movers stand up, so nobody
is ever on two tables or on none.

>>> a = Table(1, {0: "a1", 1: "a2", 2: "a3", 3: "a4"}, ButtonPositions(0, 1, 2))
>>> b = Table(2, {0: "b1", 1: "b2"}, ButtonPositions(0, 0, 1))
>>> plan = plan_boundary([a, b], seats=4, randbelow=lambda k: 0)
>>> [(m.entrant, m.from_table, m.from_seat, m.to_table, m.to_seat, m.reason) for m in plan.moves]
[('a4', 1, 3, 2, 2, <MoveReason.BALANCE: 'balance'>)]
>>> [t.players for t in plan.tables]
[3, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from domain.holdem.positions import ButtonPositions  # noqa: F401 (the examples use it)
from domain.mtt.seating import (
    RandBelow,
    Table,
    check_table_size,
    clockwise_from,
    open_seats,
    seat_field,
    table_sizes,
    waits_for_button,
)
from domain.seating import draw_seats

__all__ = [
    "BoundaryPlan",
    "Move",
    "MoveReason",
    "next_big_blind",
    "plan_boundary",
    "worst_seat",
]


class MoveReason(StrEnum):
    BALANCE = "balance"
    BREAK = "break"
    FINAL = "final"


@dataclass(frozen=True, slots=True)
class Move:
    """One player's move between hands: from a table and seat to a table and seat."""

    entrant: str
    from_table: int
    from_seat: int
    to_table: int
    to_seat: int
    reason: MoveReason


@dataclass(frozen=True, slots=True)
class BoundaryPlan:
    """The moves of one hand boundary and the tables after them (by table id).

    ``waits``: arrivals seated between the next hand's button and small blind, not dealt in
    until the button passes them.
    """

    moves: tuple[Move, ...]
    tables: tuple[Table, ...]
    waits: frozenset[str]


def next_big_blind(table: Table, seats: int) -> int | None:
    """The seat of the player who posts the big blind next (dead-button rule), if known.

    It is the first occupied seat clockwise after the seat that posted the last big blind;
    ``None`` before the table's first hand (its button is not drawn yet) or when it is empty.

    >>> next_big_blind(Table(1, {0: "a", 3: "b", 5: "c"}, ButtonPositions(5, 0, 1)), 6)
    3
    """
    if table.last_hand is None:
        return None
    return next(
        (s for s in clockwise_from(table.last_hand.big_blind, seats) if s in table.seats),
        None,
    )


def worst_seat(table: Table, seats: int, randbelow: RandBelow) -> int:
    """The worst open position at ``table`` (TDA Rule 11A): the one that pays the big blind
    soonest, never the small blind.

    That is the first open seat clockwise after the last big blind's seat (the seat that had
    the big blind is the next small blind, so it is never chosen). Before a table's first hand
    no seat is worse than another and the seat is drawn at random.

    >>> t = Table(1, {0: "a", 1: "b", 2: "c", 5: "d"}, ButtonPositions(0, 1, 2))
    >>> worst_seat(t, 6, lambda k: 0)  # seat 3 is big blind next: a single big blind
    3
    >>> worst_seat(Table(1, {0: "a", 2: "b"}), 4, lambda k: 1)  # no hand yet: drawn
    3
    """
    free = open_seats(table, seats)
    if not free:
        raise ValueError(f"table {table.table_id} has no open seat")
    if table.last_hand is None:
        return free[randbelow(len(free))]
    # The last big blind's seat comes last and is taken only when it is the one open seat.
    return next(s for s in clockwise_from(table.last_hand.big_blind, seats) if s in free)


def _mover_seat(table: Table, seats: int, randbelow: RandBelow) -> int:
    seat = next_big_blind(table, seats)
    if seat is not None:
        return seat
    occupied = sorted(table.seats)
    return occupied[randbelow(len(occupied))]


def _final_table(
    tables: dict[int, Table], seats: int, randbelow: RandBelow
) -> tuple[list[Move], Table]:
    final_id = min(tables)
    where = {
        player: (t.table_id, seat)
        for t in sorted(tables.values(), key=lambda t: t.table_id)
        for seat, player in sorted(t.seats.items())
    }
    drawn = seat_field(list(where), seats=seats, randbelow=randbelow, first_table_id=final_id)[0]
    moves = [
        Move(player, *where[player], final_id, seat, MoveReason.FINAL)
        for seat, player in sorted(drawn.seats.items())
        if where[player] != (final_id, seat)
    ]
    return moves, drawn


def _arrivals_waiting(table: Table, arrivals: set[str], seats: int) -> set[str]:
    return {
        p for s, p in table.seats.items() if p in arrivals and waits_for_button(table, s, seats)
    }


def plan_boundary(tables: Sequence[Table], *, seats: int, randbelow: RandBelow) -> BoundaryPlan:
    """The moves after a hand boundary: final table, breaks, then balance (module docstring).

    ``tables`` are the running tables with busted players already removed (a table may be
    empty). Tables left empty by busts or breaks are dropped from the result.

    >>> t1 = Table(1, {0: "a", 1: "b"}, ButtonPositions(0, 0, 1))
    >>> t2 = Table(2, {0: "c"}, ButtonPositions(1, 1, 0))
    >>> from itertools import count
    >>> draws = count()
    >>> plan = plan_boundary([t1, t2], seats=3, randbelow=lambda k: next(draws) % k)
    >>> [(m.entrant, m.from_table, m.to_table, m.to_seat, m.reason.value) for m in plan.moves]
    [('c', 2, 1, 0, 'final'), ('a', 1, 1, 2, 'final')]
    >>> [sorted(t.seats.items()) for t in plan.tables], plan.tables[0].last_hand
    ([[(0, 'c'), (1, 'b'), (2, 'a')]], None)
    """
    check_table_size(seats)
    if len({t.table_id for t in tables}) != len(tables):
        raise ValueError("a table id is listed twice")
    everyone = [p for t in tables for p in t.seats.values()]
    if len(set(everyone)) != len(everyone):
        raise ValueError("a player sits at two tables")
    if any(t.players > seats or any(not 0 <= s < seats for s in t.seats) for t in tables):
        raise ValueError(f"a table has a seat outside 0..{seats - 1}")
    running = {t.table_id: replace(t, seats=dict(t.seats)) for t in tables}
    needed = len(table_sizes(len(everyone), seats))
    if needed == 1 and len(running) > 1:
        redrawn, final = _final_table(running, seats, randbelow)
        return BoundaryPlan(tuple(redrawn), (final,), frozenset())

    moves: list[Move] = []
    arrivals: dict[int, set[str]] = {}

    def move(src: Table, seat: int, dst: Table, to_seat: int, reason: MoveReason) -> None:
        player = src.seats[seat]
        src_seats, dst_seats = dict(src.seats), dict(dst.seats)
        del src_seats[seat]
        dst_seats[to_seat] = player
        running[src.table_id] = replace(src, seats=src_seats)
        running[dst.table_id] = replace(dst, seats=dst_seats)
        moves.append(Move(player, src.table_id, seat, dst.table_id, to_seat, reason))
        arrivals.setdefault(dst.table_id, set()).add(player)
        arrivals.get(src.table_id, set()).discard(player)

    breaking = sorted(running, reverse=True)[: len(running) - needed]
    for broken_id in breaking:
        broken = running[broken_id]
        order = draw_seats([str(s) for s in broken.seats], randbelow)
        for key in sorted(order, key=order.__getitem__):
            # Never onto a table that breaks at this boundary too: nobody moves twice.
            others = [t for t in running.values() if t.table_id not in breaking]
            fewest = min(t.players for t in others)
            pool = [
                (t.table_id, s)
                for t in sorted(others, key=lambda t: t.table_id)
                if t.players == fewest
                for s in open_seats(t, seats)
            ]
            to_table, to_seat = pool[randbelow(len(pool))]
            move(running[broken_id], int(key), running[to_table], to_seat, MoveReason.BREAK)
        del running[broken_id]

    while True:
        by_size = sorted(running.values(), key=lambda t: (t.players, t.table_id))
        short, long_ = by_size[0], max(running.values(), key=lambda t: (t.players, t.table_id))
        if long_.players - short.players <= 1:
            break
        seat = _mover_seat(long_, seats, randbelow)
        move(long_, seat, short, worst_seat(short, seats, randbelow), MoveReason.BALANCE)

    waits: set[str] = set()
    for table_id, came in arrivals.items():
        waits |= _arrivals_waiting(running[table_id], came, seats)
    after = tuple(t for _, t in sorted(running.items()) if t.players)
    return BoundaryPlan(tuple(moves), after, frozenset(waits))
