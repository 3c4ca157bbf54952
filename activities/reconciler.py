"""The payout reconciler's one read: the due payout intents, their refusal cleared.

The payment itself is the money backend's ``pay_prize`` (``activities/money.py`` or
``activities/chain.py``), keyed by the intent, and the confirmation ``confirm_payout``: the
same activities the tournament's settlement runs, so a sweep and a tournament driving one
intent at the same time pay it once.
"""

from __future__ import annotations

from sqlalchemy import text
from temporalio import activity

from db.engine import Database
from wire.messages import PrizePayment
from wire.reconciler import DuePayoutsQuery

_DUE = text(
    """
    UPDATE payout_intents SET status = 'pending'
    WHERE id IN (
        SELECT id FROM payout_intents
        WHERE confirmed_at IS NULL
          AND created_at < now() - make_interval(secs => :age)
          AND id > :after
        ORDER BY id
        LIMIT :limit
    )
    AND confirmed_at IS NULL
    RETURNING id, tournament_id, position, player_id, amount, destination
    """
)


class ReconcilerActivities:
    def __init__(self, db: Database) -> None:
        self.db = db

    @activity.defn
    async def due_payouts(self, query: DuePayoutsQuery) -> list[PrizePayment]:
        """The next page (by intent id) of intents not confirmed and older than the query's
        age, each set back to ``pending`` (the seed's "clears failedAt"; the last refusal's
        reason stays until a payment confirms it)."""
        async with self.db.engine.begin() as conn:
            rows = await conn.execute(
                _DUE,
                {"age": query.older_than_seconds, "after": query.after, "limit": query.limit},
            )
            due = [
                PrizePayment(
                    intent_id=r.id,
                    tournament_id=r.tournament_id,
                    position=r.position,
                    player_id=r.player_id,
                    amount=r.amount,
                    destination=r.destination,
                )
                for r in rows
            ]
        return sorted(due, key=lambda p: p.intent_id)
