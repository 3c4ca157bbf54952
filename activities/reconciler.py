"""The payout reconciler's one read: the due payout intents, their refusal cleared.

The payment itself is the money backend's ``pay_prize`` (``activities/money.py`` or
``activities/chain.py``), keyed by the intent, and the confirmation ``confirm_payout``: the
same activities the tournament's settlement runs, so a sweep and a tournament driving one
intent at the same time pay it once.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import text
from temporalio import activity
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from activities.events import append
from db.engine import Database
from db.readstore import write_state
from wire.events import TournamentStateChanged
from wire.ids import tournament_workflow_id
from wire.keys import rake_key
from wire.messages import EventInput, PayoutStatus, PrizePayment, TournamentPhase
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


_SETTLED = text(
    """
    SELECT t.id FROM tournaments t
    WHERE t.state = 'settling'
      AND EXISTS (SELECT 1 FROM payout_intents p WHERE p.tournament_id = t.id)
      AND NOT EXISTS (
        SELECT 1 FROM payout_intents p WHERE p.tournament_id = t.id AND p.confirmed_at IS NULL
      )
    ORDER BY t.id
    LIMIT :limit
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

    @activity.defn
    async def close_orphaned_settlements(self, limit: int) -> list[str]:
        """Close, in the read model, each tournament the store shows ``settling`` with every
        payout intent confirmed whose workflow is no longer running (an operator terminated
        or reset it mid-settlement, and the sweep paid the rest): its row, its view (state
        ``closed``, every payout confirmed with its transaction) and its ``state:closed``
        event, which ends its event stream. A running workflow closes itself: left alone."""
        async with self.db.engine.connect() as conn:
            candidates = [r.id for r in await conn.execute(_SETTLED, {"limit": limit})]
        closed = []
        for tournament_id in candidates:
            try:
                if await self._still_running(tournament_id):
                    continue
                if await self._close(tournament_id):
                    closed.append(tournament_id)
            except Exception:  # one tournament's fault never holds up the others' close
                activity.logger.exception(
                    "could not close %s; the next sweep asks again", tournament_id
                )
        return closed

    async def _all_paid(
        self, session: Any, tournament_id: str, head: Any, intents: dict[str, Any]
    ) -> bool:
        """Every payout the tournament's view lists has a confirmed intent, and its rake (the
        virtual backend's, the only one that takes one) is in the house's account."""
        view = head.public["view"]
        for payout in view.get("payouts", []):
            intent = intents.get(payout.get("intent_id"))
            if intent is None or intent.confirmed_at is None:
                return False
        if view.get("rake_total") and view.get("money_backend", "virtual") == "virtual":
            taken = await session.execute(
                text("SELECT 1 FROM ledger_entries WHERE posting_key = :k LIMIT 1"),
                {"k": rake_key(tournament_id)},
            )
            if taken.first() is None:
                return False
        return True

    async def _still_running(self, tournament_id: str) -> bool:
        handle = activity.client().get_workflow_handle(tournament_workflow_id(tournament_id))
        try:
            status = (await handle.describe()).status
        except RPCError as err:
            if err.status is RPCStatusCode.NOT_FOUND:
                return False  # its history is gone (retention): nothing will close it
            raise
        return status is WorkflowExecutionStatus.RUNNING

    async def _close(self, tournament_id: str) -> bool:
        now_ms = int(time.time() * 1000)
        key = tournament_workflow_id(tournament_id)
        async with self.db.session() as session:
            head = (
                await session.execute(
                    text("SELECT version, public FROM read_states WHERE key = :key FOR UPDATE"),
                    {"key": key},
                )
            ).first()
            intents = {
                r.id: r
                for r in await session.execute(
                    text(
                        "SELECT id, tx_hash, confirmed_at FROM payout_intents"
                        " WHERE tournament_id = :t"
                    ),
                    {"t": tournament_id},
                )
            }
            updated = await session.execute(
                text(
                    "UPDATE tournaments SET state = 'closed', closed_at = now(), updated_at ="
                    " now() WHERE id = :t AND state = 'settling' RETURNING id"
                ),
                {"t": tournament_id},
            )
            if updated.first() is None:
                return False  # closed meanwhile (its own settlement, or another sweep)
            if head is None or not await self._all_paid(session, tournament_id, head, intents):
                # A place with no intent (its wallet is not known: payout_wallet_unknown) or a
                # rake still owed: not settled, whatever the intents say. Left settling.
                await session.rollback()
                return False
            if head is not None:
                # Stored by field name (``TournamentView.model_dump(mode="json")``).
                view: dict[str, Any] = json.loads(json.dumps(head.public["view"]))
                view["state"] = TournamentPhase.CLOSED.value
                view["payout_retry_at_ms"] = None
                for payout in view.get("payouts", []):
                    paid = intents.get(payout.get("intent_id"))
                    if paid is not None:
                        payout["status"] = PayoutStatus.CONFIRMED.value
                        payout["tx_hash"] = paid.tx_hash
                        payout["failure_reason"] = None
                view["version"] = head.version + 1
                await write_state(
                    session,
                    key=key,
                    kind="tournament",
                    version=head.version + 1,
                    public={**head.public, "view": view},
                )
            event = TournamentStateChanged(state="closed", closed_at=now_ms)
            await append(
                session,
                EventInput(
                    tournament_id=tournament_id,
                    type=event.TYPE,
                    dedupe_key="state:closed",
                    payload=event.payload(),
                ),
            )
            await session.commit()
        activity.logger.info("closed %s: its workflow ended in settling, every intent paid", key)
        return True
