"""``sng bench`` end to end with tiny counts against the test stack: every section is there and
every figure is a positive number. No speed is asserted: these machines are too noisy for it."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bench.load import TurnTracker
from bench.runner import BenchConfig, draw, render, run_bench, targets
from core.settings import Settings
from devtools.devstack import free_port, start_temporal, wait_for_tcp
from sng.cli import app
from tests.conftest import serve_api

# drain_s only bounds the wait (it ends when the tournaments do): on a loaded machine a tiny
# tournament can take over 30 s, and then history had nothing to count.
TINY = BenchConfig(
    baseline_updates=20,
    concurrency=1,
    levels=(1,),
    warmup_s=15.0,
    window_s=6.0,
    drain_s=90.0,
    pollers=10,
    poll_s=1.0,
    engine_hands=20,
    settle_s=10.0,
    quiesce_s=2.0,
    ceiling_s=1.0,
)


@pytest.mark.slow
async def test_bench_reports_every_section_with_positive_figures(
    api_url: str, settings: Settings, tmp_path: Path
) -> None:
    settings.force_end_min_level_age_seconds = 0  # as the bench's own stack runs
    async with serve_api(settings) as second:  # section 5 also reads over two replicas
        result = await run_bench(api_url, settings, TINY, Console(quiet=True), [second])
    json.dumps(result)  # the JSON file is exactly this
    assert result["failed_sections"] == {}
    assert result["force_end_refused"] == []  # nothing left dealing under later sections

    positive = {
        "baseline": ["p50_ms", "p95_ms", "p99_ms", "updates_per_s"],
        "api_action": ["p50_ms", "p95_ms", "p99_ms", "ratio_p50", "ratio_p99"],
        "throughput": ["hands_per_min", "actions_per_s", "ratio_to_ceiling"],
        "history": [
            "tournaments",
            "hands",
            "events_per_hand",
            "events_per_tournament",
            "actions_per_hand",
            "actions_per_tournament",
            "accepted_actions",
            "table_events_per_accepted_action",
        ],
        "engine": ["ours_us_per_action", "pokerkit_us_per_action"],
    }
    for section, keys in positive.items():
        for key in keys:
            assert result[section][key] > 0, (section, key, result[section])
    modes = ("one_poller", "distinct_viewers", "one_viewer", "two_replicas")
    for mode in modes:
        polled = result["polling"][mode]
        assert polled["requests_per_s"] > 0 and polled["p99_ms"] > 0, (mode, polled)
        assert polled["not_ok"] == 0, (mode, polled)
    # Reads come from the pushed read model (docs/read-model.md): pollers cost no query.
    for mode in modes:
        assert result["polling"][mode]["temporal_queries_per_s"] == 0, result["polling"][mode]
    assert [level["concurrent_tournaments"] for level in result["load_curve"]] == [1]
    for name in ("turn_latency", "turn_latency_long_poll", "turn_latency_ws"):
        turns = result[name]
        assert turns["count"] > 0 and turns["p50_ms"] > 0 and turns["ratio_p50"] > 0, turns
    # On the socket the act's own round trip is timed too (sent -> act_result).
    assert result["turn_latency_ws"]["acts"] > 0 and result["turn_latency_ws"]["act_p50_ms"] > 0
    assert result["history"]["actions_by_category"]["update"] > 0
    assert (
        result["history"]["events_per_accepted_action"]
        >= (result["history"]["table_events_per_accepted_action"])
    )
    assert result["history"]["tables_still_running"] == 0

    # CPU per accepted action, per process role (issue 30). Here the API and the worker run
    # in the test's own process, so they count as "bench"; the servers are found by port.
    # (PostgreSQL is the suite's embedded server unless DATABASE_URL names another.)
    roles = {"temporal", "bench"} | (set() if os.environ.get("DATABASE_URL") else {"postgres"})
    stack = result["stack"]
    assert set(stack["processes"]) == roles, stack
    assert stack["in_bench_process"] == ["api", "worker"], stack
    for level in result["load_curve"]:
        cpu = level["cpu"]
        assert cpu["units"] == level["actions"] > 0, cpu
        assert set(cpu["ms_per_unit"]) == roles, cpu
        assert all(v >= 0 for v in cpu["ms_per_unit"].values()), cpu
        assert cpu["ms_per_unit"]["temporal"] > 0, cpu  # it served every action's Update
        assert cpu["machine_ms_per_unit"] > 0 and cpu["missing"] == [], cpu
        # Turn latency as issue 30 defines it, per load (the bots long-poll), and the ratios.
        assert level["turn_count"] > 0 and level["turn_p50_ms"] > 0, level
        assert level["ratio_p50"] > 0 and level["turn_ratio_p50"] > 0, level
        assert level["ratio_to_ceiling"] > 0, level
    # The bare-Update ceiling at each load's number of workflows, with its CPU per Update.
    [one] = result["ceiling"]
    assert one["workflows"] == 1 and one["updates_per_s"] > 0 and one["p50_ms"] > 0, one
    assert one["cpu"]["ms_per_unit"]["temporal"] > 0, one
    # Issue 30's targets: the ones this run measured are judged, the others say so.
    judged = {row["target"]: row for row in result["targets"]}
    assert judged["act p50, 1 table"]["met"] in (True, False), judged
    assert judged["act p50, 1 table"]["ratio"] == pytest.approx(
        result["load_curve"][0]["act_p50_ms"] / result["baseline"]["p50_ms"], rel=0.01
    )
    assert judged["act p50, 4 tables"]["met"] is None, judged  # no 4-table load here
    assert judged["history events per accepted action (whole hands)"]["measured"] > 0, judged

    render(result)
    png = tmp_path / "bench.png"
    if draw(result, png):
        assert png.stat().st_size > 0


def test_a_failed_section_is_reported_beside_the_figures_the_others_measured() -> None:
    """The JSON and the table keep every section that worked and name the one that failed
    (an earlier run crashed in the pollers section and wrote nothing)."""
    result = {
        "machine": {"cpus": 2},
        "baseline": {"p50_ms": 14.0, "p95_ms": 20.0, "p99_ms": 30.0, "updates_per_s": 70.0},
        "api_action": None,
        "throughput": None,
        "history": None,
        "polling": None,
        "engine": {"ours_us_per_action": 5.0, "pokerkit_us_per_action": 50.0, "speedup": 10},
        "load_curve": [],
        "failed_sections": {"polling": "ReadError: the server closed the connection"},
    }
    console = Console(record=True, width=200)
    console.print(render(result))
    text = console.export_text()
    assert "polling: FAILED" in text and "ReadError" in text
    assert "bare Update p50" in text and "engine" in text
    assert draw(result, Path("/nonexistent/never-written.png")) is False


def _result(**overrides: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "machine": {"cpus": 2},
        "baseline": {"p50_ms": 20.0, "p95_ms": 30.0, "p99_ms": 40.0, "updates_per_s": 50.0},
        "ceiling": [{"workflows": 8, "updates_per_s": 100.0, "p50_ms": 60.0}],
        "load_curve": [
            {"concurrent_tournaments": 1, "act_p50_ms": 29.0},  # 1.45×: met
            {"concurrent_tournaments": 4, "act_p50_ms": 60.0},  # 3×: not met
            {"concurrent_tournaments": 8, "act_p50_ms": 90.0, "actions_per_s": 39.0},
        ],
        "turn_latency": {"count": 40, "p50_ms": 30.0, "p99_ms": 80.0},  # 1.5×: met (at most)
        "turn_latency_long_poll": None,  # the section failed
        "history": {"accepted_actions": 100, "table_events_per_accepted_action": 10.4},
    }
    return {**result, **overrides}


def test_each_target_of_issue_30_is_judged_against_this_runs_baseline() -> None:
    rows = {row["target"]: row for row in targets(_result())}
    assert list(rows) == [
        "act p50, 1 table",
        "act p50, 4 tables",
        "act p50, 1 table, on the WebSocket (act_result)",
        "turn latency p50 (SSE action_required)",
        "turn latency p50 (long-poll wake)",
        "turn latency p50 (WebSocket action_required)",
        "actions/s at 8 tables",
        "history events per accepted action (whole hands)",
    ]
    assert (rows["act p50, 1 table"]["ratio"], rows["act p50, 1 table"]["met"]) == (1.45, True)
    assert (rows["act p50, 4 tables"]["ratio"], rows["act p50, 4 tables"]["met"]) == (3.0, False)
    sse = rows["turn latency p50 (SSE action_required)"]
    assert (sse["measured"], sse["baseline"], sse["met"]) == (30.0, 20.0, True)
    assert rows["turn latency p50 (long-poll wake)"]["met"] is None  # not measured
    eight = rows["actions/s at 8 tables"]
    assert (eight["baseline"], eight["ratio"], eight["met"]) == (100.0, 0.39, False)  # < 40 %
    events = rows["history events per accepted action (whole hands)"]
    assert (events["measured"], events["ratio"], events["met"]) == (10.4, None, False)  # > 10
    # Without the 8-table load or its ceiling, the throughput target is "not measured".
    assert targets(_result(ceiling=[]))[6]["met"] is None
    socket = rows["act p50, 1 table, on the WebSocket (act_result)"]
    assert socket["met"] is None  # the WebSocket section did not run here

    console = Console(record=True, width=200)
    # The targets table alone (the figures' table needs every section's full figures).
    shown = {"targets": targets(_result()), "history": None, "load_curve": []}
    console.print(render({**_result(), **shown, "failed_sections": {}}))
    text = console.export_text()
    # Absolute figures beside the ratios.
    assert "29.0 ms" in text and "20.0 ms (bare Update p50)" in text and "1.450×" in text
    assert "39.0 /s" in text and "39.0%" in text and "≥ 40%" in text
    assert "NOT met" in text and "not measured" in text


def test_a_turn_is_timed_once_from_the_first_send_of_the_action_before_it() -> None:
    samples: list[tuple[float, float, bool]] = []
    turns = TurnTracker(samples)
    assert turns.arrived(1, 0)  # the hand's first turn: nothing was sent before it
    assert samples == []
    turns.sent(1, 0)
    first_send = turns.cause
    turns.sent(1, 0)  # sent again (a stale read): the clock does not restart
    assert turns.cause == first_send
    assert turns.arrived(1, 1) and len(samples) == 1 and samples[0][2] is True
    assert not turns.arrived(1, 1)  # shown again: timed once
    turns.sent(1, 1)
    assert turns.arrived(2, 0)  # the action ended hand 1: the next turn follows a deal
    assert len(samples) == 2 and samples[1][2] is False
    assert all(seconds >= 0 for _, seconds, _ in samples)


def test_sqlite_pragmas_reach_the_dev_server(tmp_path: Path) -> None:
    """``sng bench --sqlite-pragma journal_mode=WAL``: the dev server's SQLite file is in WAL
    mode (a WAL setting is stored in the file, so it can be read back after the server)."""
    port = free_port()
    server = start_temporal(
        tmp_path,
        port=port,
        ui_port=free_port(),
        namespace="default",
        log=tmp_path / "temporal.log",
        sqlite_pragmas=("journal_mode=WAL", "synchronous=NORMAL"),
    )
    try:
        wait_for_tcp(port, timeout=60, proc=server)
        deadline = time.monotonic() + 30
        while not (tmp_path / "temporal.db").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(timeout=15)
    with sqlite3.connect(tmp_path / "temporal.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--sqlite-pragma", "WAL"], "is not NAME=VALUE"),
        (["--sqlite-pragma", "journal_mode="], "is not NAME=VALUE"),
        (
            ["--sqlite-pragma", "journal_mode=WAL", "--api", "http://127.0.0.1:9"],
            "applies to the bench's own",
        ),
    ],
)
def test_a_bad_sqlite_pragma_is_refused_before_anything_starts(
    args: list[str], why: str, tmp_path: Path
) -> None:
    out = tmp_path / "bench.json"
    answer = CliRunner().invoke(app, ["bench", "--out", str(out), *args])
    assert answer.exit_code == 2, answer.output
    assert why in " ".join(answer.output.split()), answer.output
    assert not out.exists()
