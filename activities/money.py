"""Money legs of a tournament, virtual-chip backend: entry fees in, refunds and prizes out.

Each activity takes one :class:`MoneyMove` whose key the workflow derives from one reference
(``<tournament>:entry:<player>:<n>`` and the like), so a retry after the money moved moves
nothing. A definite refusal (insufficient funds) is non-retryable with the code as its type.
"""

from __future__ import annotations

from temporalio import activity

from db import ledger
from db.engine import Database
from domain.errors import DomainError
from wire.keys import payout_transfer_key
from wire.messages import MoneyMove, MoneyReceipt, PayoutReceipt, PrizePayment
from wire.refusals import refusal


async def ledger_move(
    db: Database, key: str, amount: int, source: str, destination: str, memo: str
) -> MoneyReceipt:
    """One keyed ledger transfer as an activity's result; a definite refusal is non-retryable."""
    try:
        result = await ledger.transfer(
            db, key=key, source=source, destination=destination, amount=amount, memo=memo
        )
    except DomainError as err:
        raise refusal(err) from None
    return MoneyReceipt(key=key, applied=result.applied, reference=f"ledger:{key}", amount=amount)


class VirtualMoneyActivities:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def _move(
        self, move: MoneyMove, source: str, destination: str, memo: str
    ) -> MoneyReceipt:
        return await ledger_move(self.db, move.key, move.amount, source, destination, memo)

    @activity.defn
    async def collect_entry(self, move: MoneyMove) -> MoneyReceipt:
        return await self._move(
            move,
            ledger.user_account(move.owner_user_id or move.player_id),
            ledger.escrow_account(move.tournament_id),
            f"entry fee {move.tournament_id}",
        )

    @activity.defn
    async def refund_entry(self, move: MoneyMove) -> MoneyReceipt:
        return await self._move(
            move,
            ledger.escrow_account(move.tournament_id),
            ledger.user_account(move.owner_user_id or move.player_id),
            f"refund {move.tournament_id}",
        )

    @activity.defn
    async def pay_prize(self, payment: PrizePayment) -> PayoutReceipt:
        # One posting per payout intent: a retry after the chips moved posts nothing.
        key = payout_transfer_key(payment.intent_id)
        try:
            result = await ledger.transfer(
                self.db,
                key=key,
                source=ledger.escrow_account(payment.tournament_id),
                destination=payment.destination,
                amount=payment.amount,
                memo=f"prize {payment.tournament_id} #{payment.position}",
            )
        except DomainError as err:
            raise refusal(err) from None
        return PayoutReceipt(
            intent_id=payment.intent_id,
            applied=result.applied,
            reference=f"ledger:{key}",
            amount=payment.amount,
        )

    @activity.defn
    async def collect_rake(self, move: MoneyMove) -> MoneyReceipt:
        """The house's share of the entry fees, out of the tournament's escrow (virtual only:
        on-chain the rake stays in the vault for the operator)."""
        return await self._move(
            move,
            ledger.escrow_account(move.tournament_id),
            ledger.HOUSE,
            f"rake {move.tournament_id}",
        )
