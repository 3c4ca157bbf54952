"""``worker.py`` at the top level is the worker's entry point, as the design card names it.

``python worker.py`` runs a worker with the settings ``sng worker`` uses (and refuses to run
with the public dev secrets unless ``SNG_ENV`` says so); the layering import-linter cannot
check for a single module is checked here.
"""

from __future__ import annotations

import ast
import asyncio
import os
import signal
import sys
from pathlib import Path

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# What sits above the worker in docs/architecture.md's layers, which it must not import.
ABOVE = {"api", "sng", "bench", "devtools", "sdk"}
# The packages below the worker, which must not import it.
BELOW = ["api", "workflows", "activities", "db", "wire", "core", "domain"]


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_worker_is_a_top_level_module_and_no_package_shadows_it() -> None:
    assert (ROOT / "worker.py").is_file()
    assert not (ROOT / "worker").exists()
    import worker

    assert Path(worker.__file__).resolve() == ROOT / "worker.py"


def test_the_worker_imports_nothing_above_it_and_nothing_below_imports_it() -> None:
    assert not (_imported(ROOT / "worker.py") & ABOVE)
    importers = [
        str(path.relative_to(ROOT))
        for package in BELOW
        for path in (ROOT / package).rglob("*.py")
        if "worker" in _imported(path)
    ]
    assert importers == []


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNG_")}
    env.update(
        PYTHONPATH=str(ROOT),
        SNG_TEMPORAL_ADDRESS=settings.temporal_address,
        SNG_TEMPORAL_TASK_QUEUE=settings.temporal_task_queue + "-entry",
        SNG_DATABASE_URL=settings.database_url,
        **extra,
    )
    return env


async def _pollers(client: Client, queue: str) -> int:
    found = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    return len(found.pollers)


async def test_python_worker_py_runs_a_worker_and_stops_on_sigterm(
    settings: Settings, client: Client
) -> None:
    env = _env(settings, SNG_ENV="test")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "worker.py", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        queue = env["SNG_TEMPORAL_TASK_QUEUE"]
        for _ in range(150):
            if await _pollers(client, queue):
                break
            assert proc.returncode is None, (await proc.stdout.read()).decode()  # type: ignore[union-attr]
            await asyncio.sleep(0.2)
        assert await _pollers(client, queue) >= 1
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    assert f"worker polling {queue}" in out.decode()


async def test_python_worker_py_refuses_the_dev_secrets_unless_asked(settings: Settings) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "worker.py", cwd=ROOT, env=_env(settings),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0
    assert "SNG_ENV is not set" in out.decode()
