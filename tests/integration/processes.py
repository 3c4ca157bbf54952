"""Workers and API replicas as processes of their own (``sng worker``, ``sng api``), started
against the session's Temporal and PostgreSQL, to kill with SIGKILL or to put behind a proxy."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from core.settings import FAULT_HELD, Settings
from devtools.devstack import free_port, wait_for_tcp
from tests.integration.helpers import eventually


def _env(settings: Settings, **faults: object) -> dict[str, str]:
    env = dict(os.environ)  # the session's codec and deck keys (tests/conftest.py)
    env.update(
        SNG_ENV="test",
        SNG_TEMPORAL_ADDRESS=settings.temporal_address,
        SNG_TEMPORAL_TASK_QUEUE=settings.temporal_task_queue,
        DATABASE_URL=settings.database_url,
        SNG_RECONCILER_SCHEDULE="false",  # the session's Temporal is shared
        SNG_RATE_LIMIT_IP="",
        SNG_RATE_LIMIT_CREDENTIAL="",
    )
    env.update({f"SNG_{name.upper()}": str(value) for name, value in faults.items()})
    return env


class Processes:
    """Workers and API replicas as processes of their own, to kill with SIGKILL."""

    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.root = root
        self.running: list[subprocess.Popen[bytes]] = []
        self.logs: dict[int, Path] = {}

    def _start(self, args: list[str], name: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
        path = self.root / f"{name}-{len(self.running)}.log"
        with open(path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "sng.cli", *args], env=env, stdout=log, stderr=log
            )
        self.running.append(proc)
        self.logs[proc.pid] = path
        return proc

    async def held(self, proc: subprocess.Popen[bytes], table_id: str) -> None:
        """Until the process's stall switch holds the act answer's write for ``table_id``
        (``core.settings.FAULT_HELD``): killed now, it dies between the Update's answer (or
        completion) and its write."""
        mark = FAULT_HELD.split("%s")[0] + table_id + " "

        async def logged() -> bool | None:
            return True if mark in self.logs[proc.pid].read_text(errors="replace") else None

        await eventually(logged, limit=60)

    def worker(self, **faults: object) -> subprocess.Popen[bytes]:
        return self._start(["worker"], "worker", _env(self.settings, **faults))

    def api(self, **faults: object) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        env = _env(self.settings, **faults)
        env.update(SNG_API_HOST="127.0.0.1", SNG_API_PORT=str(port))
        proc = self._start(["api"], "api", env)
        wait_for_tcp(port, timeout=60, proc=proc)
        return proc, f"http://127.0.0.1:{port}"

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL: no shutdown, nothing finished; whatever it held is gone."""
        proc.kill()
        proc.wait()

    def stop(self) -> None:
        for proc in self.running:
            if proc.poll() is None:
                self.kill(proc)


@contextlib.contextmanager
def running(settings: Settings, root: Path) -> Iterator[Processes]:
    """Processes started in the block, every one killed at its end."""
    procs = Processes(settings, root)
    try:
        yield procs
    finally:
        procs.stop()
