"""The durable event log (``events``), read: pages of it, and one stream of it as Server-Sent
Events. A tournament's log (``GET /tournaments/{id}/events``), a room's
(``GET /rooms/{id}/events``), the leaderboard's feed and the per-player streams all read it
through here (api/routes/events.py, room_history.py, board.py, player_stream.py): a route
module never imports another.

The log is appended by the workflows' publish activity in publication order, so its id is a
total order per stream and serves as the SSE event id. The log is polled, not pushed: one
indexed range read per open stream every ``POLL_SECONDS`` while idle, which bounds what each
connection costs the database.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any

from fastapi import Query, Request, Response
from sqlmodel import col, select
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from api.state import state_of
from db.engine import Database
from db.models import Event
from wire.messages import WireModel

POLL_SECONDS = 0.5
"""How often an idle stream re-reads the log: the latency bound and the per-stream DB cost."""
PING_SECONDS = 15
"""Keep-alive comments, so proxies do not cut an idle stream."""
PAGE = 100
MAX_EVENT_ID = 2**63 - 1

Shape = Callable[[str, dict[str, Any]], dict[str, Any]]
"""How a stream serves a logged event's payload, from its type and payload (a room's numbers
its seats from 1: ``wire.events.room_event_on_wire``); the log's own by default."""

open_streams = 0
"""Public log streams (``sse``) this process is serving now: the tests check that a
disconnect closes them. Not the per-player streams; ``StreamSlots`` counts every stream."""


class EventOut(WireModel):
    id: int
    type: str
    data: dict[str, Any]
    created_at: datetime


class EventPage(WireModel):
    events: list[EventOut]
    last_event_id: int
    """Pass as ``after`` for the next page (the request's ``after`` when the page is empty)."""
    more: bool


_reads: dict[tuple[int, str, int, int], asyncio.Task[list[Event]]] = {}
"""Page reads asked for and not yet started, by (database, stream, after, limit)."""


async def read_page(db: Database, tournament_id: str, after: int, limit: int) -> list[Event]:
    """Up to ``limit`` events of the stream after ``after``, in id order.

    Shared: every caller that asks for the same page before its read has started gets that
    read's rows. The per-player streams of one table all wake on the same change and all read
    the same page; six of them read it once, not six times over a pool of five connections
    (the sixth waited, and the turn reached its player ~15 ms later than a long-poll's, issue
    30). A caller never joins a read that has started: the read it gets began after it asked,
    so it sees every event committed before that, as its own read would."""
    key = (id(db), tournament_id, after, limit)
    pending = _reads.get(key)
    if pending is None:
        # The read starts at the loop's next turn: the streams the same change woke ask first.
        pending = _reads[key] = asyncio.create_task(_read_page(db, tournament_id, after, limit))
        # Its failure reaches every caller still waiting; none left must not log it unread.
        pending.add_done_callback(lambda task: task.cancelled() or task.exception())
    # Shielded: a caller that goes away does not cancel the read the others wait for.
    return list(await asyncio.shield(pending))


async def _read_page(db: Database, tournament_id: str, after: int, limit: int) -> list[Event]:
    del _reads[(id(db), tournament_id, after, limit)]  # started: later callers read anew
    async with db.session() as session:
        rows = await session.exec(
            select(Event)
            .where(Event.tournament_id == tournament_id, col(Event.id) > after)
            .order_by(col(Event.id))
            .limit(limit)
        )
        return list(rows)


def resume_point(after: int | None, last_event_id: str | None) -> int:
    """The later of ?after and Last-Event-ID; a malformed Last-Event-ID means from the start."""
    header, value = 0, (last_event_id or "").strip()
    # ASCII digits only and at most 19 of them: int() refuses other digits and huge strings.
    if value.isascii() and value.isdigit() and len(value) <= 19:
        header = min(int(value), MAX_EVENT_ID)
    return max(after or 0, header)


AfterQuery = Annotated[int | None, Query(ge=0, le=MAX_EVENT_ID, description="resume after this id")]


FINAL_TYPES = ("tournament_state_changed", "room_status")


def is_final(type_: str, payload: dict[str, Any]) -> bool:
    """The last event a stream ever carries: a tournament closed or cancelled, a room closed.
    The stream ends after it."""
    if type_ == "tournament_state_changed":
        return payload.get("state") in ("closed", "cancelled")
    return type_ == "room_status" and payload.get("status") == "closed"


async def ended_by(db: Database, stream_id: str, cursor: int) -> bool:
    """Has the client already read the stream's final event (it resumes after it)?"""
    async with db.session() as session:
        rows = await session.exec(
            select(Event).where(
                Event.tournament_id == stream_id,
                col(Event.type).in_(FINAL_TYPES),
                col(Event.id) <= cursor,
            )
        )
        return any(is_final(row.type, row.payload) for row in rows)


async def sse(
    db: Database,
    stream_id: str,
    request: Request,
    cursor: int,
    on_idle: Callable[[], Awaitable[None]] | None = None,
    shape: Shape | None = None,
) -> Response:
    """Serve one stream of the log (a tournament's or a room's) from after ``cursor``;
    ``on_idle`` runs at each idle poll (a room counts its observers with it). The stream ends
    after the final event; a client resuming after it gets ``204 No Content``, which tells a
    browser's EventSource to stop reconnecting."""
    if cursor > 0 and await ended_by(db, stream_id, cursor):
        return Response(status_code=204)

    slots = state_of(request.app).stream_slots
    release = slots.acquire(request)  # 429 too_many_streams before any stream opens

    async def stream() -> AsyncIterator[ServerSentEvent]:
        global open_streams
        nonlocal cursor
        open_streams += 1
        try:
            while True:
                rows = await read_page(db, stream_id, cursor, PAGE)
                for row in rows:
                    assert row.id is not None
                    cursor = row.id
                    data = row.payload if shape is None else shape(row.type, row.payload)
                    yield ServerSentEvent(
                        data=json.dumps(data, separators=(",", ":")),
                        event=row.type,
                        id=str(row.id),
                    )
                    if is_final(row.type, row.payload):
                        return
                if len(rows) < PAGE:
                    if await request.is_disconnected():
                        return
                    if on_idle is not None:
                        await on_idle()
                    await asyncio.sleep(POLL_SECONDS)
        finally:
            open_streams -= 1
            release()

    # The background task releases the slot too, in case the stream never started.
    return EventSourceResponse(stream(), ping=PING_SECONDS, background=BackgroundTask(release))


async def page(
    db: Database, stream_id: str, after: int, limit: int, shape: Shape | None = None
) -> EventPage:
    # One row past the page says whether another page follows (a full last page does not).
    rows = await read_page(db, stream_id, after, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return EventPage(
        events=[
            EventOut(
                id=r.id or 0,
                type=r.type,
                data=r.payload if shape is None else shape(r.type, r.payload),
                created_at=r.created_at,
            )
            for r in rows
        ],
        last_event_id=(rows[-1].id or 0) if rows else after,
        more=more,
    )
