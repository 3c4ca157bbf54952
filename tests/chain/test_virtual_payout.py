"""The virtual backend's pay_prize: one ledger posting per payout intent, whatever the retries."""

from __future__ import annotations

import uuid

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.money import VirtualMoneyActivities
from db import ledger
from db.engine import Database
from wire.messages import PrizePayment


async def test_a_retried_virtual_payout_posts_once(db: Database) -> None:
    tournament = f"t-{uuid.uuid4().hex[:8]}"
    winner = ledger.user_account(f"u-{uuid.uuid4().hex[:8]}")
    await ledger.transfer(
        db,
        key=f"seed:{tournament}",
        source=ledger.MINT,
        destination=ledger.escrow_account(tournament),
        amount=500,
    )
    payment = PrizePayment(
        intent_id=f"{tournament}:payout:1",
        tournament_id=tournament,
        position=1,
        player_id="u",
        amount=300,
        destination=winner,
    )
    env = ActivityEnvironment()
    acts = VirtualMoneyActivities(db)
    first = await env.run(acts.pay_prize, payment)
    again = await env.run(acts.pay_prize, payment)
    assert (first.applied, again.applied) == (True, False)
    assert first.reference == again.reference == f"ledger:payout:{payment.intent_id}"
    assert await ledger.balance(db, winner) == 300
    assert await ledger.balance(db, ledger.escrow_account(tournament)) == 200

    too_much = payment.model_copy(update={"intent_id": f"{tournament}:payout:2", "amount": 201})
    with pytest.raises(ApplicationError) as info:
        await env.run(acts.pay_prize, too_much)
    assert info.value.type == "insufficient_funds" and info.value.non_retryable
    assert await ledger.total(db) == 0
