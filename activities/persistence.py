"""Read-model writes: the tournament row and its entrants, each an idempotent upsert.

A retried activity (the worker died after the commit, the reply was lost) writes the same
row again with the same values, so retries are harmless.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.dialects.postgresql import insert
from temporalio import activity

from db.engine import Database
from db.models import Entrant, Tournament
from workflows.messages import EntrantRow, TournamentRow


class PersistenceActivities:
    def __init__(self, db: Database) -> None:
        self.db = db

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
            "updated_at": now,
        }
        stmt = insert(Tournament).values(**values, created_at=now)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"],
            set_={k: stmt.excluded[k] for k in values if k not in ("id", "settings")},
        )
        async with self.db.session() as session:
            await session.exec(stmt)
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
