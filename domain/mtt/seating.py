"""Where an MTT's entrants sit: the initial draw and late entrants (Poker TDA Rules 7 and 8).

A table is a value: its id, the occupied seats (seat → entrant) and the positions of the last
hand it dealt (``None`` before its first hand). Tables are numbered 1, 2, 3, ...; they break
from the highest number down (``domain/mtt/balancing.py``), so the final table is table 1.

TDA Rule 7 (random correct seating): the initial seats are drawn at random. Here every entrant
is equally likely to get any seat of any table, and the field sits at the fewest tables that
hold it, their sizes differing by at most one.

TDA Rule 8 (alternates, late registration, re-entries): a late entrant or a re-entry gets a full
starting stack and a seat drawn at random "from the same seat pool then in place". The pool is
the open seats of the tables with the fewest players (the issue: "at the table with the fewest
players"); ties between equally short tables are broken by the same random draw, not by a fixed
order, so no table (and no seat next to a given player) is predictable to a late registrant.
Every seat of the pool is equally likely, so tied tables are equally likely too (they have the
same number of open seats). When every table is full, the entrant opens the next table, and the
next balancing (``balancing.plan_boundary``) fills it from the long tables.

>>> tables = seat_field(["a", "b", "c", "d", "e"], seats=3, randbelow=lambda k: 0)
>>> [(t.table_id, dict(t.seats)) for t in tables]
[(1, {1: 'b', 2: 'c', 0: 'd'}), (2, {1: 'e', 2: 'a'})]
>>> seat_late_entrant(tables, "f", seats=3, randbelow=lambda k: 0)
Placement(entrant='f', table_id=2, seat=0, opens_table=False, waits=False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from domain.holdem.positions import ButtonPositions, next_positions
from domain.seating import draw_seats
from domain.settings import MAX_SEATS

__all__ = [
    "MIN_MTT_TABLE_SIZE",
    "Placement",
    "RandBelow",
    "Table",
    "check_table_size",
    "clockwise_from",
    "open_seats",
    "seat_field",
    "seat_late_entrant",
    "table_sizes",
    "tables_needed",
    "waits_for_button",
]

RandBelow = Callable[[int], int]

MIN_MTT_TABLE_SIZE = 3
"""The smallest table size that can run on more than one table. With 2-seat tables a field of
three sits 2 + 1, and a player alone at a table cannot be dealt a hand; several heads-up tables
are a bracket (a different format), not a balanced MTT. With 3 seats or more, the fewest tables
always seat at least two players each."""


@dataclass(frozen=True, slots=True)
class Table:
    """One table of an MTT at a hand boundary.

    ``seats`` maps a seat number (0..size-1) to the entrant sitting there; empty seats are
    absent. ``last_hand`` holds the button, small blind and big blind seats of the last hand
    the table dealt (``None`` before its first hand): who is big blind next follows from it by
    the dead-button rule (``domain/holdem/positions.py``).
    """

    table_id: int
    seats: Mapping[int, str] = field(default_factory=dict)
    last_hand: ButtonPositions | None = None

    @property
    def players(self) -> int:
        return len(self.seats)


@dataclass(frozen=True, slots=True)
class Placement:
    """A late entrant's (or a re-entry's) seat; ``opens_table`` when every table was full;
    ``waits`` when the seat lies between the next hand's button and small blind (the entrant
    is dealt in once the button has passed)."""

    entrant: str
    table_id: int
    seat: int
    opens_table: bool
    waits: bool = False


def check_table_size(seats: int) -> None:
    if not 2 <= seats <= MAX_SEATS:
        raise ValueError(f"a table has 2..{MAX_SEATS} seats, got {seats}")


def tables_needed(entrants: int, seats: int) -> int:
    """The fewest tables of ``seats`` that hold ``entrants`` (at least one).

    >>> [tables_needed(n, 9) for n in (1, 9, 10, 18, 19, 10_000)]
    [1, 1, 2, 2, 3, 1112]
    """
    check_table_size(seats)
    if entrants < 0:
        raise ValueError(f"entrants must be >= 0, got {entrants}")
    return max(1, math.ceil(entrants / seats))


def table_sizes(entrants: int, seats: int) -> list[int]:
    """How many players each of the fewest tables seats, largest first, differing by <= 1.

    >>> table_sizes(20, 9), table_sizes(60, 9), table_sizes(9, 9)
    ([7, 7, 6], [9, 9, 9, 9, 8, 8, 8], [9])
    """
    count = tables_needed(entrants, seats)
    if count > 1 and seats < MIN_MTT_TABLE_SIZE:
        raise ValueError(f"a multi-table field needs tables of >= {MIN_MTT_TABLE_SIZE} seats")
    base, extra = divmod(entrants, count)
    return [base + 1 if i < extra else base for i in range(count)]


def seat_field(
    entrants: Sequence[str], *, seats: int, randbelow: RandBelow, first_table_id: int = 1
) -> list[Table]:
    """The initial draw: a uniformly random seat for everyone, across the fewest tables.

    The entrants are shuffled (Fisher–Yates, ``domain.seating.draw_seats``) and dealt out to
    tables of :func:`table_sizes`; each table's seat numbers are shuffled the same way and its
    players take the first ones, so a short table's empty seats are random too.

    >>> t = seat_field([f"p{i}" for i in range(20)], seats=9, randbelow=lambda k: k - 1)
    >>> [x.players for x in t], [x.table_id for x in t]
    ([7, 7, 6], [1, 2, 3])
    """
    if len(set(entrants)) != len(entrants):
        raise ValueError("an entrant is listed twice")
    sizes = table_sizes(len(entrants), seats)
    drawn = draw_seats(entrants, randbelow)
    order = sorted(drawn, key=drawn.__getitem__)
    tables: list[Table] = []
    start = 0
    for offset, size in enumerate(sizes):
        seat_draw = draw_seats([str(s) for s in range(seats)], randbelow)
        seat_order = sorted(range(seats), key=lambda s: seat_draw[str(s)])
        players = order[start : start + size]
        start += size
        tables.append(
            Table(
                table_id=first_table_id + offset,
                seats={seat_order[i]: player for i, player in enumerate(players)},
            )
        )
    return tables


def open_seats(table: Table, seats: int) -> list[int]:
    """The empty seat numbers of ``table``, ascending.

    >>> open_seats(Table(1, {0: "a", 2: "b"}), 4)
    [1, 3]
    """
    return [s for s in range(seats) if s not in table.seats]


def seat_late_entrant(
    tables: Sequence[Table], entrant: str, *, seats: int, randbelow: RandBelow
) -> Placement:
    """A random open seat at one of the tables with the fewest players (TDA Rule 8).

    Ties between equally short tables are part of the draw (see the module's docstring). With
    every table full, the entrant opens table ``max id + 1`` at a random seat.

    >>> full = [Table(1, {0: "a", 1: "b", 2: "c"})]
    >>> seat_late_entrant(full, "z", seats=3, randbelow=lambda k: 1)
    Placement(entrant='z', table_id=2, seat=1, opens_table=True, waits=False)
    """
    check_table_size(seats)
    if any(entrant in t.seats.values() for t in tables):
        raise ValueError(f"{entrant} is already seated")
    if not tables:
        return Placement(entrant, 1, randbelow(seats), opens_table=True)
    fewest = min(t.players for t in tables)
    if fewest >= seats:
        new_id = max(t.table_id for t in tables) + 1
        return Placement(entrant, new_id, randbelow(seats), opens_table=True)
    pool = [
        (t.table_id, s)
        for t in sorted(tables, key=lambda t: t.table_id)
        if t.players == fewest
        for s in open_seats(t, seats)
    ]
    table_id, seat = pool[randbelow(len(pool))]
    table = next(t for t in tables if t.table_id == table_id)
    seated = Table(table_id, {**table.seats, seat: entrant}, table.last_hand)
    return Placement(
        entrant, table_id, seat, opens_table=False, waits=waits_for_button(seated, seat, seats)
    )


def clockwise_from(seat: int, seats: int) -> list[int]:
    """Every seat number clockwise after ``seat``, ending with ``seat`` itself.

    >>> clockwise_from(4, 6)
    [5, 0, 1, 2, 3, 4]
    """
    return [(seat + step) % seats for step in range(1, seats + 1)]


def waits_for_button(table: Table, seat: int, seats: int) -> bool:
    """Whether the player just seated at ``seat`` sits out the next hand: his seat lies strictly
    between the next hand's button and small blind (TDA Rules 8A and 10: a new player is dealt
    in "except between the small blind and button"). ``table`` already includes him.

    Before a table's first hand nobody waits (the button is drawn among everyone), nor
    heads-up, where the button is the small blind.

    >>> t = Table(1, {0: "a", 1: "new", 2: "b", 3: "c", 4: "d"}, ButtonPositions(4, 0, 2))
    >>> waits_for_button(t, 1, 6)  # next hand: button 0, small blind 2, big blind 3
    True
    >>> waits_for_button(Table(1, {0: "a", 5: "new", 2: "b", 3: "c", 4: "d"},
    ...                        ButtonPositions(4, 0, 2)), 5, 6)
    False
    """
    if seat not in table.seats:
        raise ValueError(f"seat {seat} is empty at table {table.table_id}")
    if table.last_hand is None or table.players < 2:
        return False
    upcoming = next_positions(table.last_hand, list(table.seats), seats)
    if upcoming.button == upcoming.small_blind:
        return False
    between = clockwise_from(upcoming.button, seats)
    return seat in between[: between.index(upcoming.small_blind)]
