"""The MTT books' invariant (workflows/tournament/tables.py ``books_fault``), which the
tournament checks at every hand boundary and which fails the workflow task when it breaks:
each live entry on exactly one table or in transit, every chip counted (a table a force-end
stopped keeps its seats; one finished by its order has none)."""

from __future__ import annotations

import pytest

from domain.mtt.balancing import Move, MoveReason
from domain.settings import validate_settings
from wire.messages import CreateTournamentInput, EntrantStatus, EntrantView, TournamentState
from wire.mtt import InTransit, MttBooks, MttTable
from wire.table_messages import HandReport
from workflows.tournament.books import Books
from workflows.tournament.tables import Tables, books_fault

STACKS = {"a": 300, "b": 100, "c": 200, "d": 0}  # d busted


def books(**changes: object) -> MttBooks:
    one = MttTable(number=1, workflow_id="t-1", secret="", seats={0: "a", 3: "b"})
    two = MttTable(number=2, workflow_id="t-2", secret="", seats={})
    base = MttBooks(
        tables={1: one, 2: two},
        in_transit=[InTransit(player_id="c", to_table=2, to_seat=1, stack=200)],
    )
    return base.model_copy(update=changes)


def test_books_that_hold_every_entry_once_and_every_chip_pass() -> None:
    assert books_fault(books(), STACKS, 600) is None


def test_a_stopped_table_keeps_its_entries_in_the_books() -> None:
    """A force-end stopped table 1: its players' chips are still the books' (a report it
    sent before the stop may be taken after its result, CI-43)."""
    b = books()
    b.tables[1].done = True
    assert books_fault(b, dict(STACKS), 600) is None


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("entry on two tables", "in two places: a"),
        ("entry seated and in transit", "in two places: c"),
        ("live entry nowhere", "live entries nowhere: c"),
        ("busted entry seated", "seated without chips: d"),
        ("transit carries other chips", "in transit with other chips"),
        ("a table's chips left the books", "500 chips of 600"),
        ("a broken table's entry", "live entries nowhere: a, b"),
    ],
)
def test_each_broken_invariant_is_named(case: str, words: str) -> None:
    b = books()
    stacks = dict(STACKS)
    if case == "entry on two tables":
        b.tables[2].seats[5] = "a"
    elif case == "entry seated and in transit":
        b.tables[1].seats[4] = "c"
    elif case == "live entry nowhere":
        b.in_transit = []
    elif case == "busted entry seated":
        b.tables[2].seats[2] = "d"
    elif case == "transit carries other chips":
        b.in_transit[0].stack = 250
    elif case == "a table's chips left the books":
        stacks["b"] = 0
        b.tables[1].seats = {0: "a"}
    elif case == "a broken table's entry":
        # Finished by its order with its players still on it: the order stands everyone up
        # (a table stopped by a force-end, which keeps its seats, counts them).
        b.tables[1].done = True
        b.tables[1].seats = {}
    fault = books_fault(b, stacks, 600)
    assert fault is not None and words in fault, fault


def _tables_at(one: MttTable, two: MttTable) -> Tables:
    """The table manager over two tables of five-handed play, with entries a-e."""
    raw = {
        "seats": 5,
        "maxEntrants": 10,
        "entryFee": 100,
        "startingStack": 1000,
        "actionTimeoutSeconds": 30,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    players = [*one.seats.values(), *two.seats.values()]
    state = TournamentState(
        tournament_id="t",
        name="t",
        entrants={
            p: EntrantView(player_id=p, owner_user_id=p, is_agent=False, status=EntrantStatus.PAID)
            for p in players
        },
        stacks=dict.fromkeys(players, 1000),
        mtt=MttBooks(tables={1: one, 2: two}),
    )
    inp = CreateTournamentInput(tournament_id="t", name="t", settings=raw)
    return Tables(Books(inp, validate_settings(raw), state))


def _report(table: str, hand_no: int, seats: dict[int, str], away: list[int]) -> HandReport:
    return HandReport(
        table_id=table,
        hand_no=hand_no,
        level=1,
        record={"positions": None},
        stacks_after=dict.fromkeys(seats, 1000),
        busted=[],
        auto_folds=0,
        sitting_out=away,
    )


@pytest.mark.parametrize("target_dealing", [False, True])
def test_a_moved_entry_sitting_out_arrives_sitting_out(target_dealing: bool) -> None:
    """The table's report names its seats sitting out; a move carries the flag to the
    arrival (straight into a table at its boundary, or through transit to a dealing one),
    and the other movers arrive playing."""
    one = MttTable(number=1, workflow_id="t-1", secret="", seats={0: "a", 1: "b", 2: "c"})
    two = MttTable(
        number=2,
        workflow_id="t-2",
        secret="",
        seats={0: "d", 1: "e"},
        at_boundary=not target_dealing,
        hands=1,
    )
    tables = _tables_at(one, two)
    tables.take_hand(_report("t-1", 1, one.seats, [1]))
    assert tables.m.tables[1].away == ["b"]
    moves = [
        Move("b", from_table=1, from_seat=1, to_table=2, to_seat=3, reason=MoveReason.BALANCE),
        Move("c", from_table=1, from_seat=2, to_table=2, to_seat=4, reason=MoveReason.BALANCE),
    ]
    tables.apply(moves, frozenset())
    assert tables.m.tables[1].away == []
    if target_dealing:
        assert {i.player_id: i.sitting_out for i in tables.m.in_transit} == {"b": True, "c": False}
        tables.take_hand(_report("t-2", 2, tables.m.tables[2].seats, []))
    arrive = tables.m.tables[2].arrive
    assert {a.player_id: a.sitting_out for a in arrive} == {"b": True, "c": False}


@pytest.mark.parametrize("by_seat", [True, False])
def test_busts_with_equal_stacks_at_one_table_are_placed_by_seat(by_seat: bool) -> None:
    """A hand's record lists its busts in dealing order from the button; two busts with the
    same stack tie for a rank, and their distinct places (which take a split's odd chip)
    go by seat from ``busts-by-seat-v1`` (CI-47: the button's order swapped them). Before
    it, the record's order, as recorded histories replay."""
    one = MttTable(number=1, workflow_id="t-1", secret="", seats={0: "a", 1: "b", 2: "c"})
    two = MttTable(number=2, workflow_id="t-2", secret="", seats={0: "d", 1: "e"})
    tables = _tables_at(one, two)
    tables.busts_by_seat = by_seat
    report = _report("t-1", 1, one.seats, [])
    report.stacks_after = {0: 3000, 1: 0, 2: 0}
    # The button on seat 1: seat 2 is dealt before seat 1.
    report.busted = [{"seat": 2, "stack_before": 1000}, {"seat": 1, "stack_before": 1000}]
    finishes, _ = tables.take_hand(report)
    places = {f.player_id: (f.place, f.rank) for f in finishes}
    first, second = ("b", "c") if by_seat else ("c", "b")
    assert places == {first: (4, 4), second: (5, 4)}, places
