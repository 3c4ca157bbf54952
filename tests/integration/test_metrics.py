"""Prometheus: the API's figures from PostgreSQL, and the worker's Temporal SDK metrics."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from prometheus_client import CollectorRegistry
from temporalio.client import Client
from temporalio.worker import Worker

from api.routes.metrics import Snapshot, SnapshotCollector, exposition, read_snapshot
from core.settings import Settings
from core.telemetry import worker_runtime
from core.temporal import data_converter
from db.engine import Database
from db.models import Hand, PayoutIntent, Tournament
from devtools.devstack import free_port
from tests.integration.test_table import start, table_state
from workflows.table import TableWorkflow


def test_the_collector_names_each_figure() -> None:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(Snapshot(7, 40, 2, 300, {"playing": 1, "closed": 3})))
    value = registry.get_sample_value
    assert value("sng_hands_completed_total") == 7
    assert value("sng_hand_actions_total") == 40
    assert value("sng_payouts_pending") == 2
    assert value("sng_payouts_pending_amount") == 300
    assert value("sng_tournaments", {"state": "closed"}) == 3
    text = exposition(Snapshot(), base=None).decode()
    assert "# TYPE sng_hands_completed_total counter" in text and "sng_payouts_pending 0.0" in text


async def test_figures_follow_the_tables(db: Database) -> None:
    before = await read_snapshot(db)
    tid = f"m-{uuid.uuid4().hex[:10]}"
    async with db.session() as session:
        session.add(
            Tournament(
                id=tid,
                name="metrics",
                kind="open",
                seats=2,
                entry_fee=100,
                rake_fee=0,
                starting_stack=1000,
                settings={},
                state="settling",
                workflow_id=f"tournament-{tid}",
            )
        )
        await session.flush()
        for hand_no, actions in ((1, 3), (2, 5), (0, 0)):  # hand 0: a force-end marker
            session.add(
                Hand(
                    tournament_id=tid,
                    table_id=f"table-{tid}",
                    hand_no=hand_no,
                    record={"actions": [{"action": "call"}] * actions},
                )
            )
        for position, status in ((1, "pending"), (2, "confirmed"), (3, "sent")):
            session.add(
                PayoutIntent(
                    id=f"{tid}:{position}",
                    tournament_id=tid,
                    position=position,
                    player_id=f"p{position}",
                    amount=100 * position,
                    destination="ledger",
                    status=status,
                )
            )
        await session.commit()
    after = await read_snapshot(db)
    assert after.hands_completed - before.hands_completed == 2
    assert after.hand_actions - before.hand_actions == 8
    assert after.payouts_pending - before.payouts_pending == 2
    assert after.payouts_pending_amount - before.payouts_pending_amount == 100 + 300
    settling = after.tournaments_by_state["settling"] - before.tournaments_by_state.get(
        "settling", 0
    )
    assert settling == 1


async def test_the_api_serves_metrics_over_http(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    for name in (
        "sng_hands_completed_total",
        "sng_hand_actions_total",
        "sng_payouts_pending ",
        "sng_payouts_pending_amount ",
        "process_cpu_seconds_total",
    ):
        assert name in r.text


async def test_the_worker_serves_temporal_sdk_metrics(
    client: Client, settings: Settings, table_activities: list[Any]
) -> None:
    address = f"127.0.0.1:{free_port()}"
    runtime = worker_runtime(settings.model_copy(update={"worker_metrics_address": address}))
    assert runtime is not None and worker_runtime(settings) is None
    metered = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=data_converter(settings),
        runtime=runtime,
    )
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with Worker(
        metered, task_queue=task_queue, workflows=[TableWorkflow], activities=table_activities
    ):
        handle = await start(metered, task_queue, table_state(["a", "b"]))
        await handle.signal(TableWorkflow.stop)
        await handle.result()
        async with httpx.AsyncClient() as http:
            text = (await http.get(f"http://{address}/metrics")).text
    assert "temporal_workflow_completed" in text
    assert "temporal_workflow_task_schedule_to_start_latency" in text
