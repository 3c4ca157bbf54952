"""The game state before play: long-polls on a tournament's row, one watch per replica.

Before a tournament has a table (``registering``, ``starting``, ``cancelled``) its game state
is its ``tournaments`` row. A long-poll (``waitForChange``) used to re-read that row every
0.25 s for up to 30 s, per request, with no cap on how many a client held (security review
N5: one token drove the database from 6 to 742 transactions a second). Now:

- A replica keeps one watch per pre-play tournament that is long-polled: the row as last read
  and a change event every long-poll on it parks on. The watch re-reads the row when the read
  model announces a new version of the tournament (its workflow writes the row and
  ``NOTIFY``s in one transaction, docs/read-model.md; ``GameStateCache`` listens), at least
  every ``SAFETY`` seconds, and every ``TICK`` while the replica is not listening. However
  many long-polls wait, a change costs one read per replica.
- A long-poll arriving while the watch exists is answered from it: no read either.
- A client (its verified identity) holds at most ``per_client`` long-polls at a time; one more
  is ``429 too_many_long_polls`` with ``Retry-After``. A read that does not wait is not
  counted (and reads the row itself, so a writer reads its write).
- A watch nobody has used for ``IDLE`` seconds stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from prometheus_client import Counter
from sqlmodel import select

from api.errors import ApiError
from api.read_model import SAFETY, STORE_TROUBLE, TICK, GameStateCache
from db.engine import Database
from db.models import Tournament
from domain.errors import ErrorCode
from wire.ids import tournament_workflow_id

PRE_PLAY = {"registering", "starting", "cancelled"}
"""A tournament in these states has no table: its row is its game state."""

IDLE = 10.0
"""A watch with no long-poll for this long stops (a client re-polls at once after an answer)."""

ROW_READS = Counter(
    "sng_api_pre_play_row_reads_total",
    "Reads of a pre-play tournament's row by this replica's long-poll watches (per process).",
)

log = logging.getLogger("sng.api.preplay")


async def tournament_row(db: Database, tournament_id: str) -> Tournament:
    """The tournament's row, or ``404 not_found``."""
    async with db.session() as session:
        row = (await session.exec(select(Tournament).where(Tournament.id == tournament_id))).first()
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "no such tournament")
    return row


def row_version(row: Tournament) -> int:
    """A pre-play game state's version: when the row was last written (ms)."""
    return int(row.updated_at.timestamp() * 1000)


@dataclass
class _Watch:
    tournament_id: str
    row: Tournament
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    poked: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0
    last_used: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None


class PrePlayRows:
    """This replica's watches of pre-play tournaments' rows, and its long-polls per client."""

    def __init__(self, db: Database, cache: GameStateCache, per_client: int) -> None:
        self.db = db
        self.cache = cache
        self.per_client = per_client
        self.watches: dict[str, _Watch] = {}
        """By the read model's key of the tournament (``tournament-<id>``)."""
        self.polling: dict[str, int] = {}
        """Long-polls each client holds now."""
        self.reading: dict[str, asyncio.Future[Tournament]] = {}
        """Rows being read for long-polls that found no watch, by tournament id."""
        cache.subscribe(self.notified)

    def notified(self, key: str | None) -> None:
        """The read model announced a new state for ``key`` (None: perhaps for any, the
        listener was away)."""
        if key is None:
            for each in self.watches.values():
                each.poked.set()
        elif (watch := self.watches.get(key)) is not None:
            watch.poked.set()

    async def close(self) -> None:
        for watch in list(self.watches.values()):
            if watch.task is not None:
                watch.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch.task

    async def row(self, tournament_id: str) -> Tournament:
        """The row a long-poll starts from: the watch's, if this replica watches it (kept
        current by the notifications), else read."""
        watch = self.watches.get(tournament_workflow_id(tournament_id))
        if watch is not None:
            watch.last_used = time.monotonic()
            return watch.row
        # Long-polls that arrive together before there is a watch share one read.
        reading = self.reading.get(tournament_id)
        if reading is None:
            reading = asyncio.ensure_future(tournament_row(self.db, tournament_id))
            self.reading[tournament_id] = reading
            reading.add_done_callback(lambda _: self.reading.pop(tournament_id, None))
        return await asyncio.shield(reading)

    async def wait(
        self, tournament_id: str, viewer: str, row: Tournament, version: int, seconds: float
    ) -> Tournament:
        """Wait (at most ``seconds``) until the row's version is not ``version`` or the
        tournament leaves pre-play; the row then. ``429 too_many_long_polls`` when ``viewer``
        already holds its share."""
        held = self.polling.get(viewer, 0)
        if held >= self.per_client:
            raise ApiError(
                ErrorCode.TOO_MANY_LONG_POLLS,
                f"you already hold {held} long-polls here: wait for one to answer",
                retry_after_seconds=1,
            )
        self.polling[viewer] = held + 1
        watch = self._watch(tournament_id, row)  # no await in between: nothing is missed
        watch.waiting += 1
        try:
            deadline = time.monotonic() + seconds
            while row_version(watch.row) == version and watch.row.state in PRE_PLAY:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                event = watch.changed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), remaining)
            return watch.row
        finally:
            watch.waiting -= 1
            watch.last_used = time.monotonic()
            left = self.polling[viewer] - 1
            if left:
                self.polling[viewer] = left
            else:
                del self.polling[viewer]

    def _watch(self, tournament_id: str, row: Tournament) -> _Watch:
        key = tournament_workflow_id(tournament_id)
        watch = self.watches.get(key)
        if watch is None:
            watch = self.watches[key] = _Watch(tournament_id, row)
            # The row was read before the watch listened: read it once more, in case a change
            # was announced in between.
            watch.poked.set()
        if row_version(row) > row_version(watch.row):
            watch.row = row
        if watch.task is None or watch.task.done():
            watch.task = asyncio.create_task(self._run(key, watch))
        return watch

    async def _run(self, key: str, watch: _Watch) -> None:
        try:
            while watch.waiting or time.monotonic() - watch.last_used < IDLE:
                with contextlib.suppress(TimeoutError):
                    wait = SAFETY if self.cache.listening else TICK
                    await asyncio.wait_for(watch.poked.wait(), wait)
                watch.poked.clear()
                try:
                    ROW_READS.inc()
                    row = await tournament_row(self.db, watch.tournament_id)
                except (ApiError, *STORE_TROUBLE) as err:
                    log.warning("pre-play row of %s unreadable: %s", watch.tournament_id, err)
                    continue
                if row_version(row) != row_version(watch.row) or row.state != watch.row.state:
                    watch.row = row
                    watch.changed.set()
                    watch.changed = asyncio.Event()
        finally:
            if self.watches.get(key) is watch:
                del self.watches[key]
