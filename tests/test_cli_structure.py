"""``sng structure``: the operator's preview of blinds and payouts, as tables and as JSON."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from domain.blinds import blinds_at_level
from domain.settings import BlindStructure
from sng.cli_structure import structure_app

runner = CliRunner()


def run_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(structure_app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def test_blinds_json_is_the_issue_example() -> None:
    payload = run_json("blinds", "--start", "10", "--factor", "1.5", "--levels", "8")
    assert payload == {
        "levels": [
            {"level": n, "sb": sb, "bb": 2 * sb, "ante": 0}
            for n, sb in enumerate([10, 15, 25, 30, 50, 80, 100, 150])
        ]
    }


def test_blinds_json_with_antes_matches_the_domain() -> None:
    payload = run_json(
        "blinds",
        "--start",
        "25",
        "--factor",
        "1.3",
        "--levels",
        "12",
        "--ante-start-level",
        "4",
        "--ante",
        "5",
        "--ante-factor",
        "1.25",
    )
    structure = BlindStructure(
        starting_small_blind=25,
        increase_factor=1.3,
        level_duration_seconds=600,
        ante_start_level=4,
        starting_ante=5,
        ante_increase_factor=1.25,
    )
    levels = payload["levels"]
    assert isinstance(levels, list) and len(levels) == 12
    for row in levels:
        b = blinds_at_level(structure, row["level"])
        assert (row["sb"], row["bb"], row["ante"]) == (b.sb, b.bb, b.ante)
    assert levels[3]["ante"] == 0 and levels[4]["ante"] == 5


def test_blinds_table() -> None:
    result = runner.invoke(
        structure_app, ["blinds", "--start", "10", "--factor", "2", "--levels", "3"]
    )
    assert result.exit_code == 0
    assert "continues" in result.output
    assert "small blind" in result.output and "40" in result.output


def test_blinds_refuses_a_bad_factor_naming_the_flag() -> None:
    result = runner.invoke(structure_app, ["blinds", "--start", "10", "--factor", "1.0"])
    assert result.exit_code == 2
    assert "--factor" in result.output


def test_blinds_refuses_an_ante_that_would_never_start() -> None:
    result = runner.invoke(
        structure_app, ["blinds", "--start", "10", "--factor", "2", "--ante", "5"]
    )
    assert result.exit_code == 2
    assert "--ante-start-level" in result.output


def test_payouts_json_defaults() -> None:
    assert run_json("payouts", "--field", "2") == {"paid": 1, "bps": [10000], "amounts": None}
    payload = run_json("payouts", "--field", "9", "--pool", "900")
    assert payload["paid"] == 3
    assert payload["bps"] == [5135, 2848, 2017]
    assert payload["amounts"] == [463, 256, 181]


def test_payouts_json_custom_structure_conserves_the_pool() -> None:
    payload = run_json(
        "payouts",
        "--field",
        "100",
        "--paid-percent",
        "15",
        "--top-heaviness",
        "1.0",
        "--min-paid",
        "3",
        "--pool",
        "1000001",
    )
    assert payload["paid"] == 15
    assert sum(payload["bps"]) == 10_000
    assert sum(payload["amounts"]) == 1_000_001


def test_payouts_table() -> None:
    result = runner.invoke(structure_app, ["payouts", "--field", "6", "--pool", "600"])
    assert result.exit_code == 0
    assert "64.32%" in result.output and "386" in result.output


def test_payouts_refuse_bad_input() -> None:
    bad = runner.invoke(structure_app, ["payouts", "--field", "9", "--top-heaviness", "-1"])
    assert bad.exit_code == 2 and "--top-heaviness" in bad.output
    assert runner.invoke(structure_app, ["payouts", "--field", "0"]).exit_code == 2
