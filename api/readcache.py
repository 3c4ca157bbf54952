"""Small per-process caches that stop public reads from amplifying into Temporal or SQL work.

Security review M4: ``GET /tournaments/{id}`` sent one workflow query per call and
``/metrics`` scanned the whole hands table per scrape, so anyone could turn cheap requests
into load on what plays the game. Both now go through a :class:`SingleFlight`: one fetch at a
time per key, its answer (or its refusal) served to every caller for ``ttl`` seconds.
However many requests arrive, a key costs at most one fetch per ``ttl`` per API replica.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


@dataclass
class _Entry(Generic[V]):
    at: float
    task: asyncio.Task[V]


class SingleFlight(Generic[K, V]):
    """``await cache.get(key, fetch)``: ``fetch()`` runs at most once per ``ttl`` per key;
    concurrent callers share it, and a failure is shared the same way (so a burst of
    requests for an unknown id costs one lookup). At most ``size`` keys are kept."""

    def __init__(self, ttl: float, size: int = 10_000) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: OrderedDict[K, _Entry[V]] = OrderedDict()
        self.fetches = 0

    async def get(self, key: K, fetch: Callable[[], Awaitable[V]]) -> V:
        now = time.monotonic()
        entry = self._entries.get(key)
        if entry is None or (entry.task.done() and now - entry.at > self.ttl):
            entry = _Entry(now, asyncio.ensure_future(self._run(fetch)))
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        # shield: one caller going away (a closed connection) does not cancel the others' fetch.
        return await asyncio.shield(entry.task)

    async def _run(self, fetch: Callable[[], Awaitable[V]]) -> V:
        self.fetches += 1
        return await fetch()

    def refresh(self, key: K, fetch: Callable[[], Awaitable[V]]) -> None:
        """Start a fetch for ``key`` now, in place of what is held: after a write accepted
        through this process, so the writer's next read shows its write. Callers from then on
        share the new fetch. (Never a drop: a refused write must change nothing, security
        review N4, and a dropped key made the next read a fetch whatever the ``ttl``.)"""
        task = asyncio.ensure_future(self._run(fetch))
        # Nobody may await it (no read follows): its failure is the next reader's to see.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._entries[key] = _Entry(time.monotonic(), task)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def peek(self, key: K) -> V | None:
        """The last value fetched for ``key``, however old, without fetching (None if there
        is none, or the fetch has not answered, or it failed)."""
        entry = self._entries.get(key)
        if entry is None or not entry.task.done() or entry.task.cancelled():
            return None
        if entry.task.exception() is not None:
            return None
        return entry.task.result()
