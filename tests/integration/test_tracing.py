"""OpenTelemetry: the tracing interceptor from the one client factory traces a workflow run."""

from __future__ import annotations

import uuid
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from core.telemetry import configure_tracing
from core.temporal import data_converter, interceptors
from tests.integration.bots import passive, play
from tests.integration.test_table import start, table_state
from workflows.table import TableWorkflow


async def test_a_table_run_produces_client_workflow_and_activity_spans(
    client: Client, settings: Settings, table_activities: list[Any]
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = Client(
        client.service_client,
        namespace=client.namespace,
        data_converter=data_converter(settings),
        interceptors=interceptors(provider.get_tracer("test")),
    )
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with Worker(
        traced, task_queue=task_queue, workflows=[TableWorkflow], activities=table_activities
    ):
        handle = await start(traced, task_queue, table_state(["a", "b"]))
        await play(traced, handle.id, ["a", "b"], passive, until=lambda v: v.last_hand is not None)
        await handle.signal(TableWorkflow.stop)
        await handle.result()

    spans = exporter.get_finished_spans()
    names = {span.name for span in spans}
    assert {
        "StartWorkflow:TableWorkflow",
        "RunWorkflow:TableWorkflow",
        "StartActivity:new_deck_seed",
        "RunActivity:new_deck_seed",
        "SignalWorkflow:stop",
        "StartWorkflowUpdate:act",
        "ValidateUpdate:act",
        "HandleUpdate:act",
        "CompleteWorkflow:TableWorkflow",
    } <= names, names
    # One trace: the workflow's and its activities' spans descend from the client's start.
    start_span = next(s for s in spans if s.name == "StartWorkflow:TableWorkflow")
    run = next(s for s in spans if s.name == "RunActivity:new_deck_seed")
    assert run.context.trace_id == start_span.context.trace_id


def test_otlp_export_is_off_unless_configured(settings: Settings) -> None:
    assert settings.otlp_endpoint == ""
    assert configure_tracing(settings) is None
