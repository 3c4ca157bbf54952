"""Event publication: append to the durable, ordered event log the stream is served from.

The log's id order is the order the workflow published in (it awaits each append), and the
(tournament, dedupe key) unique constraint turns a retried append into a no-op.
"""

from __future__ import annotations

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from db import leaderboard
from db.engine import Database
from db.models import Event
from wire.messages import EventInput


class EventActivities:
    def __init__(self, db: Database) -> None:
        self.db = db

    @activity.defn
    async def publish_event(self, event: EventInput) -> None:
        async with self.db.session() as session:
            await append(session, event)
            await session.commit()


async def append(session: AsyncSession, event: EventInput) -> None:
    """Append one event to the log; a retry's duplicate (same stream and key) is skipped.
    The first time only, the leaderboard and the activity feed take what the event changes
    (db/leaderboard.py), in the same transaction."""
    inserted = await session.exec(
        insert(Event)
        .values(
            tournament_id=event.tournament_id,
            type=event.type,
            dedupe_key=event.dedupe_key,
            payload=event.payload,
            created_at=func.now(),
        )
        .on_conflict_do_nothing(index_elements=["tournament_id", "dedupe_key"])
        .returning(col(Event.id))
    )
    if inserted.first() is not None:
        await leaderboard.event_published(
            session, event.tournament_id, event.type, event.dedupe_key, event.payload
        )
