"""``sng bench --mtt N``: one multi-table tournament of N bots on the bench's own stack (the
demo's bots, docs/mtt.md), and what it cost Temporal: history events, bytes and estimated
actions per entrant and per hand, the largest run of every workflow (how far from Temporal's
caps), and the API's workflow queries. The figures that size a 10,000-entrant event
(docs/capacity.md)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from bench.history import estimate_actions, workflow_runs
from bench.load import query_counter
from core.settings import Settings
from core.temporal import connect
from sdk.demo import run_demo
from wire.ids import table_workflow_id, tournament_workflow_id

Runs = list[tuple[Counter[str], int]]


def _events(counts: Counter[str]) -> int:
    return sum(v for k, v in counts.items() if k.startswith("EVENT_TYPE_"))


def _updates(counts: Counter[str]) -> int:
    return sum(v for k, v in counts.items() if k.startswith("update:"))


def _workflows(runs_by_workflow: list[Runs]) -> dict[str, Any]:
    """Totals over every run of these workflows, and their largest single run."""
    runs = [run for runs in runs_by_workflow for run in runs]
    total: Counter[str] = Counter()
    for counts, _ in runs:
        total.update(counts)
    return {
        "workflows": len(runs_by_workflow),
        "runs": len(runs),
        "events": _events(total),
        "bytes": sum(size for _, size in runs),
        "actions": sum(estimate_actions(total).values()),
        "updates": _updates(total),
        "max_events_in_a_run": max((_events(c) for c, _ in runs), default=0),
        "max_bytes_in_a_run": max((size for _, size in runs), default=0),
        "max_updates_in_a_run": max((_updates(c) for c, _ in runs), default=0),
        "counts": total,
    }


async def _tables(client: Client, tid: str) -> list[Runs]:
    """Every table the tournament opened: numbered from 1, never reused (docs/mtt.md)."""
    out = []
    number = 1
    while True:
        try:
            out.append(await workflow_runs(client, table_workflow_id(tid, number)))
        except RPCError as err:
            if err.status is RPCStatusCode.NOT_FOUND:
                return out
            raise
        number += 1


async def run_mtt(
    api_url: str,
    settings: Settings,
    console: Console,
    *,
    entrants: int,
    seats: int,
    stack: int,
    late_seconds: int,
    re_entries: int,
) -> dict[str, Any]:
    queries_before = await query_counter(api_url)
    started = time.monotonic()
    demo = await run_demo(
        api_url,
        settings,
        seats=seats,
        entrants=entrants,
        stack=stack,
        late_seconds=late_seconds,
        re_entries=re_entries,
        console=console,
    )
    seconds = time.monotonic() - started
    queries = await query_counter(api_url) - queries_before
    tid = demo["tournament_id"]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        final = (await http.get(f"/tournaments/{tid}")).json()
    client = await connect(settings)
    tournament = _workflows([await workflow_runs(client, tournament_workflow_id(tid))])
    tables = _workflows(await _tables(client, tid))
    entries = int(demo["field_size"])
    hands = int(final.get("handsPlayed") or 0)
    events = tournament["events"] + tables["events"]
    actions = tournament["actions"] + tables["actions"]
    history = tournament["bytes"] + tables["bytes"]
    paid = sum(p["amount"] for p in demo["payouts"])
    pool = int(demo["entry_fees_total"]) - int(demo["rake_total"])
    for part in (tournament, tables):
        part.pop("counts")
    return {
        "tournament_id": tid,
        "state": demo["state"],
        "entrants": entrants,
        "entries": entries,
        "seats": seats,
        "hands": hands,
        "seconds": round(seconds, 1),
        "payouts": len(demo["payouts"]),
        "paid_equals_pool": paid == pool,
        "tournament": tournament,
        "tables": tables,
        "accepted_actions": tables["updates"],
        "queries": int(queries),
        "per_entry": {
            "events": round(events / entries, 1),
            "history_kb": round(history / entries / 1024, 1),
            "actions": round(actions / entries, 1),
            "tournament_events": round(tournament["events"] / entries, 1),
            "tournament_updates": round(tournament["updates"] / entries, 2),
            "queries": round(queries / entries, 2),
        },
        "per_hand": {
            "events": round(events / max(hands, 1), 1),
            "actions": round(actions / max(hands, 1), 1),
            "tournament_events": round(tournament["events"] / max(hands, 1), 1),
        },
    }


def render_mtt(result: dict[str, Any]) -> Table:
    t, tb = result["tournament"], result["tables"]
    table = Table(
        title=(
            f"MTT {result['tournament_id']}: {result['entries']} entries ({result['entrants']}"
            f" bots), {result['hands']} hands, {result['seconds']} s, {result['state']}"
        )
    )
    for column in ("figure", "tournament", "tables", "per entry", "per hand"):
        table.add_column(column, justify="right")
    pe, ph = result["per_entry"], result["per_hand"]
    table.add_row("workflows / runs", f"1 / {t['runs']}", f"{tb['workflows']} / {tb['runs']}")
    table.add_row(
        "history events",
        f"{t['events']:,}",
        f"{tb['events']:,}",
        f"{pe['events']}",
        f"{ph['events']}",
    )
    table.add_row(
        "history MB",
        f"{t['bytes'] / 1e6:.1f}",
        f"{tb['bytes'] / 1e6:.1f}",
        f"{pe['history_kb']} kB",
    )
    table.add_row(
        "actions (estimate)",
        f"{t['actions']:,}",
        f"{tb['actions']:,}",
        f"{pe['actions']}",
        f"{ph['actions']}",
    )
    table.add_row(
        "Updates",
        f"{t['updates']:,}",
        f"{tb['updates']:,}",
        f"{pe['tournament_updates']} (tournament)",
    )
    table.add_row(
        "largest run: events", f"{t['max_events_in_a_run']:,}", f"{tb['max_events_in_a_run']:,}"
    )
    table.add_row(
        "largest run: MB",
        f"{t['max_bytes_in_a_run'] / 1e6:.2f}",
        f"{tb['max_bytes_in_a_run'] / 1e6:.2f}",
    )
    table.add_row(
        "largest run: Updates", f"{t['max_updates_in_a_run']:,}", f"{tb['max_updates_in_a_run']:,}"
    )
    table.add_row("API workflow queries", f"{result['queries']:,}", "", f"{pe['queries']}")
    table.add_row(
        "payouts = pool", "yes" if result["paid_equals_pool"] else "NO", f"{result['payouts']} paid"
    )
    return table
