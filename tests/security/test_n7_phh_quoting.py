"""N7 (security review 2026-12-03): PHH export wrote TOML *literal* strings with backslash
escapes, so a player name with ``'`` made the file invalid TOML, and a chosen JWT ``sub`` could
rewrite the ``players`` array (hiding the other players' names). Names are now TOML basic
strings, escaped: every name round-trips through ``tomllib`` and changes nothing else."""

from __future__ import annotations

import tomllib

import pytest

from domain.phh import parse_phh, replay_phh, to_phh
from tests.domain.builders import checked_down, engine_record

DECK = [rank + suit for suit in "shdc" for rank in "AKQJT98765432"]

NAMES = [
    "o'brien",
    'x\',"Alice","Bob"]#',
    'quote " and \\ backslash',
    "new\nline\tand\rreturn",
    "del\x7fand\x00nul",
    "ünïcødé 🂡",
    "'''",
    '"""',
]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_round_trips_and_rewrites_nothing(name: str) -> None:
    hand = checked_down(DECK)
    plain = to_phh(engine_record(hand), {0: "ann", 1: "bob", 2: "cat"})
    text = to_phh(engine_record(hand), {0: name, 1: "victim", 2: "cat"})
    parsed = tomllib.loads(text)
    assert parsed["players"] == [name, "victim", "cat"]
    # Everything else reads as it does with plain names.
    expected = tomllib.loads(plain)
    assert {k: v for k, v in parsed.items() if k != "players"} == {
        k: v for k, v in expected.items() if k != "players"
    }
    assert replay_phh(parse_phh(text)).stacks == hand.stacks
