"""How long ``sng dev`` takes to be ready: ``python -m devtools.devtimings [--runs N]``.

Each run launches ``sng dev --timings`` on free ports, first in a fresh data directory and then
again in the same one (a warm start: the database initialised and migrated, Temporal's SQLite
file there), and measures from the launch until ``/healthz`` answers 200 **and** a worker polls
the task queue, then stops the stack with SIGTERM (a background job of a non-interactive shell
ignores SIGINT) and times the stop. It prints one row per start and the stack's own phase
timings (the ``--timings`` lines). This is a measurement, not a test: docs/capacity.md records
its figures; the tests only check that ``sng dev`` becomes ready.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from devtools.devstack import free_port

NAMESPACE = "default"
TASK_QUEUE = "sng-tournaments"


@dataclass
class Start:
    label: str
    healthz_s: float | None = None
    worker_s: float | None = None
    ready_line_s: float | None = None
    stop_s: float | None = None
    cpu_s: float = 0.0
    """CPU seconds (user + system) of the whole stack, start to stop: every process of it."""
    phases: list[str] = field(default_factory=list)

    @property
    def ready_s(self) -> float | None:
        if self.healthz_s is None or self.worker_s is None:
            return None
        return max(self.healthz_s, self.worker_s)


def dev_env(data_dir: Path, ports: dict[str, int]) -> dict[str, str]:
    """This process's environment for a ``sng dev`` of its own: its data directory and ports,
    and none of the caller's ``SNG_`` settings or ``DATABASE_URL`` (the tests use it too)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNG_") and k != "DATABASE_URL"}
    env.update(
        SNG_DATA_DIR=str(data_dir),
        SNG_API_PORT=str(ports["api"]),
        SNG_TEMPORAL_PORT=str(ports["temporal"]),
        SNG_TEMPORAL_UI_PORT=str(ports["ui"]),
        SNG_POSTGRES_PORT=str(ports["pg"]),
    )
    return env


async def _worker_polls(temporal: str) -> bool:
    try:
        client = await Client.connect(temporal, namespace=NAMESPACE)
        answer = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=NAMESPACE,
                task_queue=TaskQueue(name=TASK_QUEUE),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            )
        )
    except Exception:
        return False
    return len(answer.pollers) > 0


def _healthy(api: str) -> bool:
    try:
        return httpx.get(f"{api}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def measure(label: str, data_dir: Path, *, timeout: float = 120) -> Start:
    ports = {"api": free_port(), "temporal": free_port(), "ui": free_port(), "pg": free_port()}
    api = f"http://127.0.0.1:{ports['api']}"
    temporal = f"127.0.0.1:{ports['temporal']}"
    result = Start(label)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launched = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sng.cli", "dev", "--timings"],
        env={**dev_env(data_dir, ports), "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "timing" in line:
                result.phases.append(line.rstrip())
            if "SnG stack ready" in line and result.ready_line_s is None:
                result.ready_line_s = time.monotonic() - launched

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while time.monotonic() - launched < timeout and proc.poll() is None:
            now = time.monotonic() - launched
            if result.healthz_s is None and _healthy(api):
                result.healthz_s = now
            if result.worker_s is None and asyncio.run(_worker_polls(temporal)):
                result.worker_s = time.monotonic() - launched
            if result.ready_s is not None and result.ready_line_s is not None:
                break
            time.sleep(0.1)
    finally:
        stopping = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        result.stop_s = time.monotonic() - stopping
        reader.join(timeout=5)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh + warm pairs to measure")
    args = parser.parse_args()
    rows: list[Start] = []
    for n in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="sng-dev-timings-") as root:
            data = Path(root) / "data"
            rows.append(measure(f"fresh #{n + 1}", data))
            rows.append(measure(f"warm #{n + 1}", data))
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(
        "| start | /healthz | worker polls | ready (both) | ready line | stop (SIGTERM)"
        " | CPU, start to stop |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.label} | {_fmt(row.healthz_s)} s | {_fmt(row.worker_s)} s |"
            f" {_fmt(row.ready_s)} s | {_fmt(row.ready_line_s)} s | {_fmt(row.stop_s)} s |"
            f" {row.cpu_s:.1f} s |"
        )
    for row in rows:
        print(f"\n{row.label}:")
        for line in row.phases:
            print(f"  {line.strip()}")
    return 0 if all(row.ready_s is not None for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
