"""`sng dev` as a new user runs it: ready, usable, stopped by Ctrl-C, resumed with the same data."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from devtools.devstack import free_port, port_is_free, worker_polls
from devtools.devtimings import dev_env

pytestmark = pytest.mark.slow

SETTINGS = {
    "seats": 2,
    "entryFee": 100,
    "startingStack": 1500,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 60},
    "actionTimeoutSeconds": 10,
}


_env = dev_env


def _start(env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sng.cli", "dev", *options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_ready(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if "Ctrl-C stops everything" in line:
            return "".join(seen)
    proc.kill()
    raise AssertionError("sng dev never became ready:\n" + "".join(seen))


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout=40)


def test_dev_runs_resumes_and_stops_cleanly(tmp_path: Path) -> None:
    ports = {"api": free_port(), "temporal": free_port(), "ui": free_port(), "pg": free_port()}
    env = _env(tmp_path / "data", ports)
    api = f"http://127.0.0.1:{ports['api']}"

    proc = _start(env)
    try:
        banner = _wait_ready(proc)
        assert f"http://127.0.0.1:{ports['ui']}" in banner and f":{ports['api']}" in banner
        r = httpx.post(
            f"{api}/admin/tournaments",
            json={"name": "dev", "settings": SETTINGS},
            headers={"X-Service-Key": "dev-service-key"},
            timeout=10,
        )
        assert r.status_code == 201, r.text
        tid = r.json()["tournamentId"]
        # The Temporal UI's own API lists the workflow the API started.
        ui = f"http://127.0.0.1:{ports['ui']}/api/v1/namespaces/default/workflows"
        deadline = time.monotonic() + 15
        while f"tournament-{tid}" not in httpx.get(ui, timeout=5).text:
            assert time.monotonic() < deadline, "workflow not listed by the Temporal UI"
            time.sleep(0.3)
        # The worker made the payout reconciler's schedule as it started; the UI shows it.
        assert "sng-payout-reconciler" in banner
        schedules = f"http://127.0.0.1:{ports['ui']}/api/v1/namespaces/default/schedules"
        deadline = time.monotonic() + 15
        while "sng-payout-reconciler" not in httpx.get(schedules, timeout=5).text:
            assert time.monotonic() < deadline, "reconciler schedule not listed by the UI"
            time.sleep(0.3)
    finally:
        assert _stop(proc) == 0
    for port in ports.values():
        assert port_is_free(port), f"port {port} still held after Ctrl-C"

    proc = _start(env, "--timings")
    try:
        banner = _wait_ready(proc)
        # Ready means the API answers and a worker polls (issue 28); --timings says when.
        assert "timing" in banner and "a worker polls the task queue" in banner, banner
        assert asyncio.run(
            worker_polls(f"127.0.0.1:{ports['temporal']}", "default", "sng-tournaments")
        )
        r = httpx.get(f"{api}/tournaments/{tid}", timeout=10)
        assert r.status_code == 200 and r.json()["state"] == "registering"
        # The row is written by the workflow's activity: it may land a moment after ready.
        deadline = time.monotonic() + 15
        while tid not in [
            t["tournamentId"] for t in httpx.get(f"{api}/tournaments", timeout=10).json()
        ]:
            assert time.monotonic() < deadline, "tournament row missing from the lobby"
            time.sleep(0.3)
        assert _keeps_an_idle_connection(ports["api"], idle=6.0)
    finally:
        # SIGTERM too (a background job of a non-interactive shell ignores SIGINT).
        assert _stop(proc, signal.SIGTERM) == 0


def _keeps_an_idle_connection(port: int, *, idle: float) -> bool:
    """Does the API keep a keep-alive connection open after ``idle`` quiet seconds? With
    uvicorn's default (5 s, httpx's own expiry too) it closed it as pollers reused it, and the
    bench's 100 pollers got "server disconnected without sending a response"."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        time.sleep(idle)
        conn.setblocking(False)
        while True:  # drain what is left of the answer, then see whether it was closed
            try:
                if conn.recv(65536) == b"":
                    return False  # the server closed it meanwhile
            except BlockingIOError:
                return True  # nothing more to read, and still open


def test_dev_reports_a_taken_port(tmp_path: Path) -> None:
    ports = {"api": free_port(), "temporal": free_port(), "ui": free_port(), "pg": free_port()}
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", ports["api"]))
        blocker.listen()
        proc = _start(_env(tmp_path / "data", ports))
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert f"API port {ports['api']}" in out and "already in use" in out
