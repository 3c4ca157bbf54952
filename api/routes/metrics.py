"""``GET /metrics``: the service's own figures for Prometheus, read from PostgreSQL (at most
once per 15 s per replica, however often it is scraped).

Reading the durable tables at scrape time (instead of counting in this process) makes every
API replica report the same deployment-wide numbers, correct after restarts and no matter
which replica or worker did the work; aggregate replicas with ``max``, not ``sum``. The
Temporal SDK's own metrics (task latencies, slots, poll counts) are served by the worker, see
``SNG_WORKER_METRICS_ADDRESS``. The process's own metrics (``process_*``, ``python_*``) come
from prometheus-client's default registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from fastapi import APIRouter, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import text

from api.deps import DbDep
from api.readcache import SingleFlight
from api.state import state_of
from db.engine import Database

router = APIRouter(tags=["ops"])

# hand_no 0 is the force-end marker row, not a dealt hand.
HANDS_SQL = text(
    "SELECT count(*), coalesce(sum(CASE WHEN jsonb_typeof(record->'actions') = 'array'"
    " THEN jsonb_array_length(record->'actions') ELSE 0 END), 0)"
    " FROM hands WHERE hand_no > 0"
)
PAYOUTS_SQL = text(
    "SELECT count(*), coalesce(sum(amount), 0) FROM payout_intents WHERE status <> 'confirmed'"
)
TOURNAMENTS_SQL = text("SELECT state, count(*) FROM tournaments GROUP BY state")


@dataclass(frozen=True)
class Snapshot:
    hands_completed: int = 0
    hand_actions: int = 0
    payouts_pending: int = 0
    payouts_pending_amount: int = 0
    tournaments_by_state: dict[str, int] = field(default_factory=dict)


SNAPSHOT_READS = Counter(
    "sng_api_metrics_reads",
    "How often this replica read the /metrics snapshot from PostgreSQL (at most every 15 s).",
)


async def read_snapshot(db: Database) -> Snapshot:
    SNAPSHOT_READS.inc()
    async with db.engine.connect() as conn:
        hands, actions = (await conn.execute(HANDS_SQL)).one()
        pending, amount = (await conn.execute(PAYOUTS_SQL)).one()
        states = {str(s): int(n) for s, n in (await conn.execute(TOURNAMENTS_SQL)).all()}
    return Snapshot(int(hands), int(actions), int(pending), int(amount), states)


class SnapshotCollector(Collector):
    """Turns one snapshot into metric families (names and meanings in docs/operations.md)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        s = self.snapshot
        yield CounterMetricFamily(
            "sng_hands_completed",
            "Hands played to the end and recorded by their tournament.",
            value=s.hands_completed,
        )
        yield CounterMetricFamily(
            "sng_hand_actions",
            "Betting actions in recorded hands: players' accepted actions plus the check or"
            " fold the table makes when a decision timer runs out.",
            value=s.hand_actions,
        )
        yield GaugeMetricFamily(
            "sng_payouts_pending",
            "Payout intents not yet confirmed (pending, sent or failed-and-retrying).",
            value=s.payouts_pending,
        )
        yield GaugeMetricFamily(
            "sng_payouts_pending_amount",
            "Sum of the amounts of the payout intents not yet confirmed.",
            value=s.payouts_pending_amount,
        )
        by_state = GaugeMetricFamily(
            "sng_tournaments", "Tournaments by lifecycle state.", labels=["state"]
        )
        for state, count in sorted(s.tournaments_by_state.items()):
            by_state.add_metric([state], count)
        yield by_state


def exposition(snapshot: Snapshot, *, base: CollectorRegistry | None = REGISTRY) -> bytes:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(snapshot))
    process = generate_latest(base) if base is not None else b""
    return process + generate_latest(registry)


@router.get("/metrics", include_in_schema=False)
async def metrics(db: DbDep, request: Request) -> Response:
    """The snapshot is read at most once per ``METRICS_TTL`` per replica, shared by every
    scrape meanwhile: a scrape storm costs PostgreSQL nothing more (security review M4)."""
    cache: SingleFlight[str, Snapshot] = state_of(request.app).metrics_snapshots
    snapshot = await cache.get("snapshot", lambda: read_snapshot(db))
    return Response(exposition(snapshot), media_type=CONTENT_TYPE_LATEST)
