"""Fault drills' own stack: a restartable Temporal dev server (SQLite file), a stoppable
PostgreSQL and a worker in a separate process that can be killed with SIGKILL.

Nothing here is shared with the rest of the suite, so a drill can take any of it down.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from temporalio.client import Client

from core.settings import Settings
from core.temporal import connect
from db.engine import Database
from db.migrate import upgrade_async
from devtools.devstack import free_port, start_temporal, wait_for_tcp
from devtools.pg import EmbeddedPostgres
from tests.replay import replay_everything


@dataclass
class DrillStack:
    root: Path
    pg: EmbeddedPostgres
    database_url: str
    temporal_port: int
    task_queue: str = "drills"
    temporal: subprocess.Popen[bytes] | None = None
    worker: subprocess.Popen[bytes] | None = None
    extra_workers: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    """Workers beyond the first, by slot (the two-worker drill kills them at random)."""
    worker_starts: int = 0
    kills: int = 0
    logs: list[Path] = field(default_factory=list)

    @property
    def settings(self) -> Settings:
        return Settings(
            env="test",
            temporal_address=f"127.0.0.1:{self.temporal_port}",
            temporal_task_queue=self.task_queue,
            database_url=self.database_url,
        )

    def start_temporal(self) -> None:
        self.temporal = start_temporal(
            self.root / "temporal",
            port=self.temporal_port,
            ui_port=free_port(),
            namespace="default",
            log=self.root / "temporal.log",
        )
        wait_for_tcp(self.temporal_port, timeout=60, proc=self.temporal)

    def stop_temporal(self) -> None:
        assert self.temporal is not None
        self.temporal.send_signal(signal.SIGTERM)
        self.temporal.wait(30)

    def start_worker(self, slot: int = 0) -> None:
        env = dict(os.environ)
        env.update(
            SNG_ENV="test",
            SNG_TEMPORAL_ADDRESS=f"127.0.0.1:{self.temporal_port}",
            SNG_TEMPORAL_TASK_QUEUE=self.task_queue,
            DATABASE_URL=self.database_url,
        )
        log = self.root / f"worker-{self.worker_starts}.log"
        self.logs.append(log)
        proc = subprocess.Popen(
            [sys.executable, "-m", "sng.cli", "worker"],
            env=env,
            stdout=open(log, "wb"),
            stderr=subprocess.STDOUT,
        )
        if slot == 0:
            self.worker = proc
        else:
            self.extra_workers[slot] = proc
        self.worker_starts += 1

    def kill_worker(self, slot: int = 0) -> None:
        """SIGKILL: no shutdown, no draining; whatever it was doing is cut off mid-step."""
        proc = self.worker if slot == 0 else self.extra_workers.get(slot)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
            self.kills += 1

    def stop(self) -> None:
        for slot in list(self.extra_workers):
            self.kill_worker(slot)
        self.kill_worker()
        if self.temporal is not None and self.temporal.poll() is None:
            self.temporal.kill()
            self.temporal.wait()
        self.pg.remove()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "drill_seed" in metafunc.fixturenames:
        count = metafunc.config.getoption("--drill-repeat")
        first = metafunc.config.getoption("--drill-seed")
        if first is None:
            first = int(os.environ["SNG_DRILL_RANDOM_SEED"])  # drawn in tests/conftest.py
        metafunc.parametrize("drill_seed", [first + n for n in range(count)])


@pytest.fixture
async def drill() -> AsyncIterator[DrillStack]:
    root = Path(tempfile.mkdtemp(prefix="sng-drill-"))
    pg = EmbeddedPostgres(root / "pg", free_port())
    pg.start()
    pg.create_database("drill")
    url = pg.url("drill")
    await upgrade_async(url)
    stack = DrillStack(root=root, pg=pg, database_url=url, temporal_port=free_port())
    stack.start_temporal()
    stack.start_worker()
    try:
        yield stack
        # Whatever the drill did, every history it left must replay with today's code.
        client = await connect(stack.settings)
        (await replay_everything(client)).raise_on_failure()
    finally:
        stack.stop()


@pytest.fixture
async def drill_client(drill: DrillStack) -> Client:
    deadline = time.monotonic() + 30
    while True:
        try:
            return await connect(drill.settings)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


@pytest.fixture
async def drill_db(drill: DrillStack) -> AsyncIterator[Database]:
    database = Database(drill.database_url)
    yield database
    await database.dispose()
