"""``sng bench``'s accounting: history events and estimated Temporal Cloud actions per hand and
per tournament (every run, continued-as-new ones included), and the engine micro-benchmark.

The action estimate maps history event types to Temporal Cloud's billable action categories
(docs/capacity.md lists the mapping and what it leaves out):

* a workflow run started (client start, child start, continue-as-new)    → 1
* an activity scheduled, plus one per retry attempt                      → 1 (+ retries)
* a timer started                                                       → 1
* a signal received (from a client or another workflow; counted once)    → 1
* an Update accepted                                                    → 1
* a search-attribute upsert, a marker (local activity / side effect)     → 1

Queries never reach the history; the API's query counter measures them separately.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus

from wire.ids import table_workflow_id, tournament_workflow_id

ACTION_EVENTS = {
    "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED": "workflow_started",
    "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED": "activity",
    "EVENT_TYPE_TIMER_STARTED": "timer",
    "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED": "signal",
    "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED": "update",
    "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES": "search_attributes",
    "EVENT_TYPE_MARKER_RECORDED": "marker",
}


async def workflow_runs(client: Client, workflow_id: str) -> list[tuple[Counter[str], int]]:
    """Each run of ``workflow_id``, newest first (walking continue-as-new back from the latest
    run): its event counts by type, plus ``activity_retry`` for attempts after the first and
    ``update:NAME`` per accepted Update; and its history's size in bytes."""
    out: list[tuple[Counter[str], int]] = []
    run_id: str | None = None
    while True:
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        counts: Counter[str] = Counter()
        size = 0
        previous = ""
        async for event in handle.fetch_history_events():
            size += event.ByteSize()
            counts[EventType.Name(event.event_type)] += 1
            if event.HasField("workflow_execution_started_event_attributes"):
                previous = (
                    event.workflow_execution_started_event_attributes.continued_execution_run_id
                )
            if event.HasField("workflow_execution_update_accepted_event_attributes"):
                accepted = event.workflow_execution_update_accepted_event_attributes
                counts[f"update:{accepted.accepted_request.input.name}"] += 1
            if event.HasField("activity_task_started_event_attributes"):
                counts["activity_retry"] += max(
                    0, event.activity_task_started_event_attributes.attempt - 1
                )
        out.append((counts, size))
        if not previous:
            return out
        run_id = previous


async def workflow_events(client: Client, workflow_id: str) -> tuple[Counter[str], int]:
    """Event counts by type over every run of ``workflow_id`` (``workflow_runs``), and the
    runs."""
    runs = await workflow_runs(client, workflow_id)
    total: Counter[str] = Counter()
    for counts, _ in runs:
        total.update(counts)
    return total, len(runs)


def estimate_actions(events: Counter[str]) -> Counter[str]:
    actions: Counter[str] = Counter()
    for event_type, category in ACTION_EVENTS.items():
        actions[category] += events.get(event_type, 0)
    actions["activity"] += events.get("activity_retry", 0)
    return actions


async def tournament_accounting(
    client: Client, finished: list[dict[str, Any]], hands_by_tid: dict[str, int]
) -> dict[str, Any]:
    """Events and actions per tournament and per hand, over the tournaments that finished by
    themselves (tournament workflow and its table, every run): whole tournaments, so whole
    hands only (a force-ended tournament, with a hand cut short, is never counted)."""
    events: Counter[str] = Counter()
    runs = 0
    rows: list[tuple[int, int, int]] = []  # (hands, events, actions) per tournament
    table_events = accepted_actions = tables_open = 0
    for item in finished:
        tid = item["tid"]
        mine: Counter[str] = Counter()
        for workflow_id in (tournament_workflow_id(tid), table_workflow_id(tid)):
            counted, n = await workflow_events(client, workflow_id)
            mine.update(counted)
            runs += n
            if workflow_id == table_workflow_id(tid):
                # The table's accepted `act` Updates are the players' accepted actions (the
                # table's other Updates, seeds and sit-ins, are not actions).
                accepted_actions += counted.get("update:act", 0)
                table_events += sum(v for k, v in counted.items() if k.startswith("EVENT_TYPE_"))
                described = await client.get_workflow_handle(workflow_id).describe()
                tables_open += described.status == WorkflowExecutionStatus.RUNNING
        events.update(mine)
        rows.append(
            (
                hands_by_tid.get(tid, 0),
                sum(v for k, v in mine.items() if k.startswith("EVENT_TYPE_")),
                sum(estimate_actions(mine).values()),
            )
        )
    tournaments = len(finished)
    hands = sum(hands_by_tid.get(item["tid"], 0) for item in finished)
    actions = estimate_actions(events)
    total_events = sum(v for k, v in events.items() if k.startswith("EVENT_TYPE_"))
    total_actions = sum(actions.values())
    return {
        "tournaments": tournaments,
        "hands": hands,
        "workflow_runs": runs,
        "events_total": total_events,
        "events_per_tournament": round(total_events / max(tournaments, 1), 1),
        "events_per_hand": round(total_events / max(hands, 1), 1),
        "accepted_actions": accepted_actions,
        # Every table event (deals, seeds, timers, signals included) over its accepted actions:
        # what one accepted action costs the table's history, all in (issue 30's "history
        # events per accepted action, measured over whole hands").
        "table_events_per_accepted_action": round(table_events / max(accepted_actions, 1), 2),
        # The same with the tournament workflow's events (hand reports, levels) added.
        "events_per_accepted_action": round(total_events / max(accepted_actions, 1), 2),
        # Tables whose last run was still open when counted (their tail is missing): 0 wanted.
        "tables_still_running": tables_open,
        "actions_total": total_actions,
        "actions_per_tournament": round(total_actions / max(tournaments, 1), 1),
        "actions_per_hand": round(total_actions / max(hands, 1), 2),
        "hands_per_tournament": round(hands / max(tournaments, 1), 1),
        "mean_tournament_seconds": round(
            sum(item["seconds"] for item in finished) / max(tournaments, 1), 1
        ),
        "marginal_events": _fit([(h, e) for h, e, _ in rows]),
        "marginal_actions": _fit([(h, a) for h, _, a in rows]),
        "per_tournament": [{"hands": h, "events": e, "actions": a} for h, e, a in rows],
        "actions_by_category": dict(sorted(actions.items())),
        "events_by_type": {
            k.removeprefix("EVENT_TYPE_").lower(): v
            for k, v in sorted(events.items(), key=lambda kv: -kv[1])
            if k.startswith("EVENT_TYPE_")
        },
    }


def _fit(points: list[tuple[int, int]]) -> dict[str, float] | None:
    """Least squares ``y = fixed + per_hand × hands`` over the tournaments: what a hand costs
    at the margin and what a tournament costs besides its hands (None without spread)."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return {"per_hand": round(slope, 2), "fixed_per_tournament": round(my - slope * mx, 1)}


# -- 6. the engine -----------------------------------------------------------------------------
def engine(hands: int) -> dict[str, Any] | None:
    """µs per action, ours against pokerkit on the same recorded 6-max hands (bench/engine.py)."""
    from bench import engine as module

    started = time.perf_counter()
    work = module.scripts(6, hands)
    actions = sum(len(a) for _, a in work)
    ours, theirs = module.run_ours(work), module.run_pokerkit(work)
    return {
        "hands": hands,
        "actions": actions,
        "ours_us_per_action": round(ours / actions * 1e6, 2),
        "pokerkit_us_per_action": round(theirs / actions * 1e6, 2),
        "ours_hands_per_s": round(hands / ours, 1),
        "pokerkit_hands_per_s": round(hands / theirs, 1),
        "speedup": round(theirs / ours, 2),
        "seconds": round(time.perf_counter() - started, 1),
    }


def icm(repeats: int = 5) -> dict[str, Any]:
    """ms per ``icm_equities`` call, with every place paid, against the textbook sum over every
    finishing order (n! of them) on the same 8 stacks; and the DP alone at 10 players, the
    largest table."""
    from itertools import permutations

    from domain.icm import icm_equities

    def orders(stacks: list[int], prizes: list[int]) -> list[float]:
        n, total = len(stacks), sum(stacks)
        out = [0.0] * n
        for order in permutations(range(n)):
            p, left = 1.0, total
            for i in order:
                p *= stacks[i] / left
                left -= stacks[i]
            for place, i in enumerate(order):
                out[i] += p * prizes[place]
        return out

    def best(fn: Any, *args: Any) -> float:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t)
        return min(times) * 1e3

    eight, ten = [1000 * (i + 1) for i in range(8)], [1000 * (i + 1) for i in range(10)]
    prizes = [3000, 2000, 1500, 1000, 800, 600, 400, 300, 250, 150]
    dp8, orders8 = best(icm_equities, eight, prizes[:8]), best(orders, eight, prizes[:8])
    return {
        "dp_8_ms": round(dp8, 3),
        "orders_8_ms": round(orders8, 1),
        "dp_10_ms": round(best(icm_equities, ten, prizes), 3),
        "speedup_8": round(orders8 / dp8, 1),
    }
