"""The MTT books' invariant (workflows/tournament/tables.py ``books_fault``), which the
tournament checks at every hand boundary and which fails the workflow task when it breaks:
each live entry on exactly one running table or in transit, every chip counted."""

from __future__ import annotations

import pytest

from wire.mtt import InTransit, MttBooks, MttTable
from workflows.tournament.tables import books_fault

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
        b.tables[1].done = True
    fault = books_fault(b, stacks, 600)
    assert fault is not None and words in fault, fault
