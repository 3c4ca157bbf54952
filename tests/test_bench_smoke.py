"""``sng bench`` end to end with tiny counts against the test stack: every section is there and
every figure is a positive number. No speed is asserted: these machines are too noisy for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from bench.runner import BenchConfig, draw, render, run_bench
from core.settings import Settings
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
    for name in ("turn_latency", "turn_latency_long_poll"):
        turns = result[name]
        assert turns["count"] > 0 and turns["p50_ms"] > 0 and turns["ratio_p50"] > 0, turns
    assert result["history"]["actions_by_category"]["update"] > 0

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
