"""The tournament.lifecycle span: the seed's seven config attributes, a state_transition event
per transition, and the close attributes, recorded from the workflow's persisted times."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.worker import Worker

from activities.telemetry import TelemetryActivities
from db.engine import Database
from tests.drills.test_drills import run_tournament
from worker import WORKFLOWS, activities_for


async def test_a_closed_tournament_records_its_lifecycle_span(
    client: Client, db: Database, task_queue: str
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = TelemetryActivities(provider.get_tracer("test"))
    activities = [a for a in activities_for(db) if getattr(a, "__name__", "") != "record_lifecycle"]
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=[*activities, telemetry.record_lifecycle],
    ):
        handle = await run_tournament(client, db, task_queue, 2)
        view = await handle.result()

    [span] = [s for s in exporter.get_finished_spans() if s.name == "tournament.lifecycle"]
    attrs = dict(span.attributes or {})
    assert attrs["tournament.table_id"] == view.tournament_id
    assert (attrs["tournament.seats"], attrs["tournament.entry_fee"]) == (2, 100)
    assert attrs["tournament.starting_stack"] == 300
    assert attrs["tournament.level_duration_seconds"] == 600
    assert attrs["tournament.action_timeout_seconds"] == 60
    assert attrs["tournament.prize_structure_summary"] == "100"
    assert list(attrs["tournament.actual_payouts"]) == [p.amount for p in view.payouts]
    assert attrs["tournament.auto_fold_count"] == 0
    assert attrs["tournament.duration_ms"] >= 0
    moves = [
        (dict(e.attributes or {})["from"], dict(e.attributes or {})["to"]) for e in span.events
    ]
    assert moves == [
        ("registering", "starting"),
        ("starting", "playing"),
        ("playing", "ended"),
        ("ended", "settling"),
        ("settling", "closed"),
    ]
    assert span.start_time is not None and span.end_time is not None
    assert span.end_time - span.start_time == attrs["tournament.duration_ms"] * 1_000_000
