"""Read-model writes: the tournament row and its entrants, each an idempotent upsert.

A retried activity (the worker died after the commit, the reply was lost) writes the same
row again with the same values, so retries are harmless.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from core.codec import EncryptionCodec
from db import leaderboard
from db.engine import Database
from db.models import Entrant, Hand, PayoutIntent, Tournament
from db.readstore import seal_private, write_state, write_tournament
from wire.ids import tournament_workflow_id
from wire.messages import (
    EntrantRow,
    HandRow,
    PayoutConfirmation,
    PayoutFailure,
    PrizePayment,
    TournamentDelta,
    TournamentRow,
    TournamentView,
)


def _at(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


async def publish_view(
    session: AsyncSession, view: TournamentView | None, delta: TournamentDelta | None = None
) -> None:
    """The tournament's newest state for the pushed read model, in the same transaction: its
    head and changed entrants (``delta``), or the whole view from a run that publishes it
    whole (and from an activity an older worker scheduled), stored as it was before."""
    if delta is not None:
        await write_tournament(session, delta)
    elif view is not None:
        await write_state(
            session,
            key=tournament_workflow_id(view.tournament_id),
            kind="tournament",
            version=view.version,
            public={"view": view.model_dump(mode="json")},
        )


class PersistenceActivities:
    def __init__(self, db: Database, codec: EncryptionCodec) -> None:
        self.db = db
        self.codec = codec  # seals each seat's part of a hand record (db/readstore.py)

    @activity.defn
    async def save_tournament(self, row: TournamentRow) -> None:
        now = datetime.now(UTC)
        values = {
            "id": row.tournament_id,
            "name": row.name,
            "kind": row.kind,
            "seats": row.seats,
            "entry_fee": row.entry_fee,
            "rake_fee": row.rake_fee,
            "starting_stack": row.starting_stack,
            "settings": row.settings,
            "state": row.state.value,
            "workflow_id": row.workflow_id,
            "registered_count": row.registered_count,
            "current_level": row.current_level,
            "field_size": row.field_size,
            "play_started_at": _at(row.play_started_at_ms),
            "level_started_at": _at(row.level_started_at_ms),
            "ended_at": _at(row.ended_at_ms),
            "closed_at": _at(row.closed_at_ms),
            "updated_at": now,
        }
        stmt = insert(Tournament).values(**values, created_at=now)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"],
            set_={k: stmt.excluded[k] for k in values if k not in ("id", "settings")},
        )
        async with self.db.session() as session:
            await session.exec(stmt)
            await publish_view(session, row.view, row.delta)
            await session.commit()

    @activity.defn
    async def publish_entrants(self, delta: TournamentDelta) -> None:
        """Entrant rows of a publication too large for one payload, ahead of its head
        (``Books.publication``); upserted by version, so a retry is harmless."""
        async with self.db.session() as session:
            await write_tournament(session, delta)
            await session.commit()

    @activity.defn
    async def save_entrant(self, row: EntrantRow) -> None:
        now = datetime.now(UTC)
        values = {
            "tournament_id": row.tournament_id,
            "player_id": row.player_id,
            "owner_user_id": row.owner_user_id,
            "is_agent": row.is_agent,
            "advisor_agent_id": row.advisor_agent_id,
            "status": row.status.value,
            "seat": row.seat,
            "updated_at": now,
        }
        stmt = insert(Entrant).values(**values, registered_at=now)
        stmt = stmt.on_conflict_do_update(
            index_elements=["tournament_id", "player_id"],
            set_={k: stmt.excluded[k] for k in values if k not in ("tournament_id", "player_id")},
        )
        async with self.db.session() as session:
            await session.exec(stmt)
            await session.commit()

    @activity.defn
    async def record_hand(self, row: HandRow) -> bool:
        """The hand row and its eliminations in one transaction; False if already recorded."""
        now = datetime.now(UTC)
        async with self.db.session() as session:
            inserted = await session.exec(
                insert(Hand)
                .values(
                    tournament_id=row.tournament_id,
                    table_id=row.table_id,
                    hand_no=row.hand_no,
                    level=row.level,
                    record=seal_private(row.record, row.table_id, row.hand_no, self.codec),
                    created_at=now,
                )
                .on_conflict_do_nothing(index_elements=["table_id", "hand_no"])
                .returning(col(Hand.id))
            )
            first_time = inserted.first() is not None
            for finish in row.eliminations:
                await session.exec(
                    update(Entrant)
                    .where(
                        col(Entrant.tournament_id) == row.tournament_id,
                        col(Entrant.player_id) == finish.player_id,
                    )
                    .values(
                        elimination_order=finish.place,
                        finish_position=finish.rank,
                        updated_at=now,
                    )
                )
            await publish_view(session, row.view, row.delta)
            if first_time:  # the hand's key: a retry counts it once
                await leaderboard.hand_settled(
                    session,
                    row.record,
                    where={
                        "tournamentId": row.tournament_id,
                        "tableId": row.table_id,
                        "handNumber": row.hand_no,
                    },
                    room=False,
                )
            await session.commit()
        return first_time

    @activity.defn
    async def create_payout_intents(self, intents: list[PrizePayment]) -> None:
        """One row per paid position; UNIQUE (tournament, position) makes a re-run harmless."""
        if not intents:
            return
        now = datetime.now(UTC)
        stmt = insert(PayoutIntent).values(
            [
                {
                    "id": i.intent_id,
                    "tournament_id": i.tournament_id,
                    "position": i.position,
                    "player_id": i.player_id,
                    "amount": i.amount,
                    "destination": i.destination,
                    "status": "pending",
                    "created_at": now,
                }
                for i in intents
            ]
        )
        async with self.db.session() as session:
            await session.exec(stmt.on_conflict_do_nothing())
            await session.commit()

    @activity.defn
    async def confirm_payout(self, confirmation: PayoutConfirmation) -> None:
        async with self.db.session() as session:
            await session.exec(
                update(PayoutIntent)
                .where(col(PayoutIntent.id) == confirmation.intent_id)
                .values(
                    status="confirmed",
                    tx_hash=confirmation.tx_hash or confirmation.reference,
                    failure_reason=None,
                    confirmed_at=func.coalesce(col(PayoutIntent.confirmed_at), func.now()),
                )
            )
            await session.commit()

    @activity.defn
    async def fail_payout(self, failure: PayoutFailure) -> None:
        """Mark a refused intent ``failed``, unless it is confirmed by now: the tournament and
        the reconciler both drive intents, and a refusal one of them saw never undoes the
        other's payment."""
        async with self.db.session() as session:
            await session.exec(
                update(PayoutIntent)
                .where(
                    col(PayoutIntent.id) == failure.intent_id,
                    col(PayoutIntent.confirmed_at).is_(None),
                )
                .values(status="failed", failure_reason=failure.reason[:1000])
            )
            await session.commit()
