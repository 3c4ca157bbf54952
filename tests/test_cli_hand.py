"""``sng hand replay`` and ``sng hand verify`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from domain.deck import commitment, shuffled_deck
from domain.holdem import hand_record
from sng.cli_hand import hand_app
from tests.domain.builders import checked_down, engine_record
from wire.game_state import HandRecord

runner = CliRunner()

PHH = """variant = 'NT'
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
actions = ['d dh p1 AsAd', 'd dh p2 KsKd', 'd dh p3 2c7h', 'p3 f', 'p1 cbr 10', 'p2 f']
"""


def test_replay_prints_finishing_stacks(tmp_path: Path) -> None:
    path = tmp_path / "hand.phh"
    path.write_text(PHH)
    result = runner.invoke(hand_app, ["replay", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"finishing_stacks": [102, 98, 100]}
    plain = runner.invoke(hand_app, ["replay", str(path)])
    assert plain.exit_code == 0 and plain.output.split() == ["102", "98", "100"]


def test_replay_reports_an_illegal_action_with_its_index(tmp_path: Path) -> None:
    path = tmp_path / "bad.phh"
    path.write_text(PHH.replace("'p1 cbr 10'", "'p1 cbr 3'"))
    result = runner.invoke(hand_app, ["replay", str(path), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.output)["error"]["index"] == 4


def _record(seed: bytes) -> dict[str, object]:
    record = hand_record(checked_down(shuffled_deck(seed)))
    record.update(seed=seed.hex(), commitment=commitment(seed))
    return record


def test_verify_accepts_an_honest_record_and_rejects_a_tampered_one(tmp_path: Path) -> None:
    record = _record(bytes(range(32)))
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(record))
    ok = runner.invoke(hand_app, ["verify", str(path)])
    assert ok.exit_code == 0 and "OK" in ok.output
    record["board"] = ["2c", "2d", "2h"]
    path.write_text(json.dumps(record))
    assert runner.invoke(hand_app, ["verify", str(path)]).exit_code == 1
    record = _record(bytes(range(32)))
    record["commitment"] = commitment(bytes(32))
    path.write_text(json.dumps(record))
    assert runner.invoke(hand_app, ["verify", str(path)]).exit_code == 1


def test_verify_checks_a_record_exactly_as_the_api_serves_it(tmp_path: Path) -> None:
    seed = bytes(range(32))
    engine = engine_record(
        checked_down(shuffled_deck(seed)),
        hand_no=1,
        level=1,
        small_blind=1,
        big_blind=2,
        deck_commitment=commitment(seed),
        deck_seed=seed.hex(),
    )
    served = HandRecord.model_validate(engine).to_wire()
    assert "deckSeed" in served and "holeCards" in served and "deck_seed" not in served
    path = tmp_path / "served.json"
    path.write_text(json.dumps(served))
    ok = runner.invoke(hand_app, ["verify", str(path)])
    assert ok.exit_code == 0, ok.output
    served["holeCards"]["0"] = ["2c", "3c"]
    path.write_text(json.dumps(served))
    assert runner.invoke(hand_app, ["verify", str(path)]).exit_code == 1
