"""Who is at a cash room: seated players' polling (their connection, for the disconnect grace)
and observers (``observerCount``), kept in ``room_presence``; and whether a seated player's
stream (WebSocket or SSE) at a room's or a tournament's table is open or when it dropped, kept
in ``stream_presence``: the disconnect grace is measured from that drop (docs/rooms.md). Only
the API writes either; the table reads them through its activity when a decision timer runs
out, so a drop costs the table no Update.

Writes are throttled per viewer in this process, so a busy poller costs PostgreSQL one upsert
every ``TOUCH_SECONDS``. An anonymous viewer is its address, hashed: one client's several
polls and streams count once, and so does a client that changes its user agent with every
request (security review L7: it inflated ``observerCount`` and the table). Observer rows
older than ``PRUNE_AFTER`` are deleted, at most once per ``PRUNE_EVERY`` per process.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from starlette.requests import HTTPConnection

from api.auth import ANONYMOUS_PREFIX
from api.ratelimit import address_key
from db.engine import Database
from db.models import RoomPresence, StreamPresence

OBSERVER_WINDOW = timedelta(seconds=30)
"""Someone who looked at a room within this long is watching it (``observerCount``)."""
TOUCH_SECONDS = 2.0
"""Presence is written at most this often per viewer (the rest are served from memory)."""
PRUNE_AFTER = timedelta(minutes=10)
PRUNE_EVERY = 60.0
_last_prune = 0.0


async def observers(db: Database, room_ids: list[str]) -> dict[str, int]:
    if not room_ids:
        return {}
    since = datetime.now(UTC) - OBSERVER_WINDOW
    async with db.session() as session:
        rows = await session.exec(
            select(RoomPresence.room_id, func.count())
            .where(
                col(RoomPresence.room_id).in_(room_ids),
                col(RoomPresence.seated).is_(False),
                col(RoomPresence.last_seen) > since,
            )
            .group_by(col(RoomPresence.room_id))
        )
        return {room_id: int(n) for room_id, n in rows}


_touched: dict[tuple[str, str], float] = {}


async def touch(db: Database, room_id: str, viewer: str, *, seated: bool) -> None:
    """Record that ``viewer`` is looking at the room now (throttled per viewer)."""
    now = time.monotonic()
    if now - _touched.get((room_id, viewer), 0.0) < TOUCH_SECONDS:
        return
    _touched[(room_id, viewer)] = now
    if len(_touched) > 100_000:  # forget the oldest half rather than grow without bound
        for key in sorted(_touched, key=_touched.__getitem__)[: len(_touched) // 2]:
            del _touched[key]
    stmt = insert(RoomPresence).values(
        room_id=room_id, viewer=viewer, seated=seated, last_seen=func.now()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["room_id", "viewer"], set_={"seated": seated, "last_seen": func.now()}
    )
    async with db.session() as session:
        await session.exec(stmt)
        await session.commit()
    await _prune(db, now)


_streams: dict[tuple[str, str], float] = {}
"""Streams this process saw open, by (table, player): when it last wrote so."""
STREAM_RECORDS_KEPT = timedelta(days=1)
"""A stream record untouched this long is deleted (its grace is long over either way)."""


async def stream_open(db: Database, table_id: str, player: str) -> None:
    """A seated player's stream at the table is open: a drop recorded before no longer holds
    (a reconnect within the grace). Throttled per stream like ``touch``; a drop clears the
    throttle, so the first tick of a reconnected stream writes at once."""
    now = time.monotonic()
    key = (table_id, player)
    if now - _streams.get(key, -TOUCH_SECONDS) < TOUCH_SECONDS:
        return
    _streams[key] = now
    if len(_streams) > 100_000:
        for old in sorted(_streams, key=_streams.__getitem__)[: len(_streams) // 2]:
            del _streams[old]
    await _stream_row(db, table_id, player, dropped=False)


async def stream_dropped(db: Database, table_id: str, player: str) -> None:
    """A seated player's stream closed now (the client went away, or the stream ended)."""
    _streams.pop((table_id, player), None)
    await _stream_row(db, table_id, player, dropped=True)


async def _stream_row(db: Database, table_id: str, player: str, *, dropped: bool) -> None:
    when = func.now() if dropped else None
    stmt = insert(StreamPresence).values(
        table_id=table_id, player_id=player, dropped_at=when, updated_at=func.now()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["table_id", "player_id"],
        set_={"dropped_at": when, "updated_at": func.now()},
    )
    async with db.session() as session:
        await session.exec(stmt)
        await session.commit()


async def _prune(db: Database, now: float) -> None:
    """Drop observers gone for ``PRUNE_AFTER`` (seated players' rows are the disconnect
    grace's evidence: they stay until the player leaves), and stream records untouched for
    ``STREAM_RECORDS_KEPT``."""
    global _last_prune
    if now - _last_prune < PRUNE_EVERY:
        return
    _last_prune = now
    async with db.session() as session:
        await session.exec(
            delete(RoomPresence).where(
                col(RoomPresence.seated).is_(False),
                col(RoomPresence.last_seen) < datetime.now(UTC) - PRUNE_AFTER,
            )
        )
        await session.exec(
            delete(StreamPresence).where(
                col(StreamPresence.updated_at) < datetime.now(UTC) - STREAM_RECORDS_KEPT
            )
        )
        await session.commit()


def anonymous(request: HTTPConnection) -> str:
    client = address_key(request.client.host) if request.client else "?"
    return ANONYMOUS_PREFIX + hashlib.sha256(client.encode()).hexdigest()[:24]
