"""Who is at a cash room: seated players' polling (their connection, for the disconnect grace)
and observers (``observerCount``), kept in ``room_presence``.

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
from db.models import RoomPresence

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


async def _prune(db: Database, now: float) -> None:
    """Drop observers gone for ``PRUNE_AFTER`` (seated players' rows are the disconnect
    grace's evidence: they stay until the player leaves)."""
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
        await session.commit()


def anonymous(request: HTTPConnection) -> str:
    client = address_key(request.client.host) if request.client else "?"
    return ANONYMOUS_PREFIX + hashlib.sha256(client.encode()).hexdigest()[:24]
