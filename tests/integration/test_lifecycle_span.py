"""The tournament.lifecycle span: one root span per tournament (no parent), the seed's seven
config attributes, a state_transition for each transition emitted as it happens (a child span
of the root, exported at once), and at close the root with its events and close attributes.
A worker restart mid-tournament changes none of it (docs/operations.md, "Traces")."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.worker import Worker

from activities.telemetry import TelemetryActivities, lifecycle_ids
from db.engine import Database
from tests.drills.test_drills import run_tournament
from wire.messages import LifecycleRecord, TournamentPhase, Transition
from worker import WORKFLOWS, activities_for, single_batch
from workflows.tournament import TournamentWorkflow

LIFECYCLE = "tournament.lifecycle"
PLAYING = TournamentPhase.PLAYING
MOVES = [
    ("registering", "starting"),
    ("starting", "playing"),
    ("playing", "ended"),
    ("ended", "settling"),
    ("settling", "closed"),
]


def telemetry_worker(
    client: Client, db: Database, task_queue: str, exporter: InMemorySpanExporter
) -> Worker:
    """A worker whose telemetry activities export to ``exporter`` through a tracer provider of
    its own (as a separate worker process would have)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = TelemetryActivities(provider.get_tracer("test"))
    activities: list[Any] = [
        getattr(telemetry, a.__name__)
        if isinstance(getattr(a, "__self__", None), TelemetryActivities)
        else a
        for a in activities_for(db)
    ]
    return single_batch(
        Worker(client, task_queue=task_queue, workflows=list(WORKFLOWS), activities=activities)
    )


def of(tid: str, spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if dict(s.attributes or {}).get("tournament.table_id") == tid]


def moves(items: Sequence[Any]) -> list[tuple[object, object]]:
    """(from, to) of each state_transition event or span, in order."""
    return [(dict(i.attributes or {})["from"], dict(i.attributes or {})["to"]) for i in items]


def check_config(attrs: dict[str, Any], tid: str) -> None:
    assert attrs["tournament.table_id"] == tid
    assert (attrs["tournament.seats"], attrs["tournament.entry_fee"]) == (2, 100)
    assert attrs["tournament.starting_stack"] == 300
    assert attrs["tournament.level_duration_seconds"] == 600
    assert attrs["tournament.action_timeout_seconds"] == 60
    assert attrs["tournament.prize_structure_summary"] == "100"


def check_trace(tid: str, spans: Sequence[ReadableSpan]) -> ReadableSpan:
    """One root span, every transition once as a child of it, at its own time."""
    mine = of(tid, spans)
    [root] = [s for s in mine if s.name == LIFECYCLE]
    assert root.parent is None, "the lifecycle span is the tournament's root, no made-up parent"
    assert root.context is not None
    check_config(dict(root.attributes or {}), tid)
    assert moves(root.events) == MOVES
    children = sorted((s for s in mine if s.name != LIFECYCLE), key=lambda s: s.start_time or 0)
    assert moves(children) == MOVES  # each once, none lost, none repeated
    for child in children:
        assert child.context is not None and child.parent is not None
        assert child.context.trace_id == root.context.trace_id
        assert child.parent.span_id == root.context.span_id
    # The root's events are at the times the children were emitted for (the real ones).
    assert [e.timestamp for e in root.events] == [c.start_time for c in children]
    assert root.start_time == children[0].start_time  # it opens at `starting`
    return root


async def test_a_closed_tournament_records_its_lifecycle_span(
    client: Client, db: Database, task_queue: str
) -> None:
    exporter = InMemorySpanExporter()
    async with telemetry_worker(client, db, task_queue, exporter):
        handle = await run_tournament(client, db, task_queue, 2)
        view = await handle.result()

    root = check_trace(view.tournament_id, exporter.get_finished_spans())
    attrs = dict(root.attributes or {})
    assert list(attrs["tournament.actual_payouts"]) == [p.amount for p in view.payouts]
    assert attrs["tournament.auto_fold_count"] == 0
    assert attrs["tournament.duration_ms"] >= 0
    assert root.start_time is not None and root.end_time is not None
    assert root.end_time - root.start_time == attrs["tournament.duration_ms"] * 1_000_000


async def test_transitions_are_emitted_as_they_happen_across_a_worker_restart(
    client: Client, db: Database, task_queue: str
) -> None:
    tid = f"span-{uuid.uuid4().hex[:8]}"
    exporter = InMemorySpanExporter()
    gate = asyncio.Event()  # the bots hold their first action until the first worker is gone
    tournament = asyncio.create_task(run_tournament(client, db, task_queue, 2, tid, gate=gate))
    handle = client.get_workflow_handle_for(TournamentWorkflow.run, f"tournament-{tid}")
    try:
        async with telemetry_worker(client, db, task_queue, exporter):
            for _ in range(300):
                with contextlib.suppress(RPCError):  # not started yet
                    playing = (await handle.query(TournamentWorkflow.state)).state is PLAYING
                    # Each transition is emitted just after the workflow enters its state.
                    if playing and len(of(tid, exporter.get_finished_spans())) >= 2:
                        break
                await asyncio.sleep(0.1)
            # Before close, the exporter already holds the tournament's transitions so far,
            # each with the seed's seven config attributes; the root comes at close.
            so_far = of(tid, exporter.get_finished_spans())
            assert moves(so_far) == MOVES[:2]
            assert all(s.name != LIFECYCLE for s in so_far)
            for span in so_far:
                check_config(dict(span.attributes or {}), tid)
        # The first worker is gone mid-tournament; another (its own tracer provider) finishes.
        async with telemetry_worker(client, db, task_queue, exporter):
            gate.set()
            await tournament
            await handle.result()
    finally:
        gate.set()
        if not tournament.done():
            tournament.cancel()

    check_trace(tid, exporter.get_finished_spans())


async def test_a_cancelled_tournament_records_a_root_from_registration() -> None:
    """Cancelled while registering, it never reached `starting`: its root opens at
    `registering`, with the one transition it made."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    record = LifecycleRecord(
        tournament_id="t-cancelled",
        seats=2,
        entry_fee=100,
        starting_stack=300,
        level_duration_seconds=600,
        action_timeout_seconds=60,
        prize_structure_summary="100",
        transitions=[
            Transition(state="registering", at_ms=1_000),
            Transition(state="cancelled", at_ms=5_000),
        ],
        closed_at_ms=5_000,
        actual_payouts=[],
        auto_fold_count=0,
    )
    await TelemetryActivities(provider.get_tracer("test")).record_lifecycle(record)
    [root] = exporter.get_finished_spans()
    assert root.name == LIFECYCLE and root.parent is None
    assert root.context is not None
    assert (root.context.trace_id, root.context.span_id) == lifecycle_ids("t-cancelled")
    assert moves(root.events) == [("registering", "cancelled")]
    assert (root.start_time, root.end_time) == (1_000 * 1_000_000, 5_000 * 1_000_000)
