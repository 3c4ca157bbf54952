"""``sng bench --mtt``'s accounting (bench/mtt.py): totals over every run of the tournament
and of its tables, and each kind's largest run, the figures docs/capacity.md sizes a
10,000-entrant event from."""

from __future__ import annotations

from collections import Counter

from rich.console import Console

from bench.mtt import _workflows, render_mtt


def run(events: int, updates: int, size: int) -> tuple[Counter[str], int]:
    return (
        Counter(
            {
                "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED": 1,
                "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED": events - 1 - updates,
                "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED": updates,
                "update:act": updates,
            }
        ),
        size,
    )


def test_totals_and_the_largest_run_over_every_run_of_every_workflow() -> None:
    # Two tables: the first continued-as-new once.
    tables = _workflows([[run(100, 30, 5_000), run(300, 90, 20_000)], [run(50, 10, 2_000)]])
    assert tables["workflows"] == 2 and tables["runs"] == 3
    assert tables["events"] == 450 and tables["bytes"] == 27_000
    assert tables["updates"] == 130
    assert tables["max_events_in_a_run"] == 300
    assert tables["max_bytes_in_a_run"] == 20_000
    assert tables["max_updates_in_a_run"] == 90
    # One action per run start, activity and Update (bench/history.py's mapping).
    assert tables["actions"] == 450


def test_the_table_renders_every_figure() -> None:
    part = _workflows([[run(100, 30, 5_000)]])
    part.pop("counts")
    result = {
        "tournament_id": "t",
        "state": "closed",
        "entrants": 20,
        "entries": 24,
        "hands": 40,
        "seconds": 61.0,
        "payouts": 3,
        "paid_equals_pool": True,
        "tournament": part,
        "tables": part,
        "queries": 12,
        "per_entry": {
            "events": 8.3,
            "history_kb": 0.4,
            "actions": 8.3,
            "tournament_events": 4.2,
            "tournament_updates": 1.25,
            "queries": 0.5,
        },
        "per_hand": {"events": 5.0, "actions": 5.0, "tournament_events": 2.5},
    }
    console = Console(record=True, width=160)
    console.print(render_mtt(result))
    text = console.export_text()
    assert "24 entries (20 bots), 40 hands" in text
    assert "largest run: Updates" in text and "payouts = pool" in text
