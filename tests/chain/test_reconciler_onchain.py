"""The payout reconciler on the chain backend: its sweep and a tournament's own payment race
for one intent through two workers (two operator-key senders), and the vault pays it once."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy import text
from temporalio.client import Client
from temporalio.worker import Worker

from db.engine import Database
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips, chain_activities
from tests.chain.money_workflows import PayPrizeWorkflow
from tests.chain.test_activities import _fund_vault
from wire.messages import PrizePayment
from wire.reconciler import ReconcileInput, ReconcileResult
from worker import build_worker
from workflows.reconciler import ReconcilerWorkflow


async def _intent(db: Database, payment: PrizePayment) -> None:
    """The intent settlement wrote a minute ago (its tournament row first: the foreign key)."""
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO tournaments (id, name, kind, seats, entry_fee, rake_fee,"
                " starting_stack, settings, state, workflow_id, registered_count,"
                " current_level, created_at, updated_at) VALUES (:t, :t, 'sng', 2, 100, 0,"
                " 1500, '{}', 'settling', :t, 2, 1, now(), now())"
            ),
            {"t": payment.tournament_id},
        )
        await conn.execute(
            text(
                "INSERT INTO payout_intents (id, tournament_id, position, player_id, amount,"
                " destination, status, created_at) VALUES (:i, :t, 1, :p, :a, :d, 'failed',"
                " now() - interval '1 minute')"
            ),
            {
                "i": payment.intent_id,
                "t": payment.tournament_id,
                "p": payment.player_id,
                "a": payment.amount,
                "d": payment.destination,
            },
        )


async def test_the_sweep_and_the_tournament_pay_an_onchain_intent_once(
    client: Client, db: Database, chips: Chips, chain: ChainInfo
) -> None:
    winner = chips.new_wallet(0)
    _fund_vault(chips, chain, 400)
    tid = f"rc-{uuid.uuid4().hex[:8]}"
    payment = PrizePayment(
        intent_id=f"{tid}:payout:1",
        tournament_id=tid,
        position=1,
        player_id=winner.address,
        amount=400,
        destination=winner.address,
    )
    await _intent(db, payment)
    sweeper_queue, tournament_queue = f"tq-{uuid.uuid4().hex[:8]}", f"tq-{uuid.uuid4().hex[:8]}"
    sweeper = chain_activities(chain)
    settlement = chain_activities(chain)
    async with (
        build_worker(client, db, sweeper_queue, chain=sweeper),
        Worker(
            client,
            task_queue=tournament_queue,
            workflows=[PayPrizeWorkflow],
            activities=[settlement.pay_prize],
        ),
    ):

        async def sweep() -> ReconcileResult:
            return await client.execute_workflow(
                ReconcilerWorkflow.run,
                ReconcileInput(),
                id=f"sweep-{uuid.uuid4().hex[:8]}",
                task_queue=sweeper_queue,
            )

        by_tournament, swept = await asyncio.gather(
            client.execute_workflow(
                PayPrizeWorkflow.run,
                payment,
                id=f"pay-{uuid.uuid4().hex[:8]}",
                task_queue=tournament_queue,
            ),
            sweep(),
        )
        if payment.intent_id not in swept.confirmed:
            # A nonce race between the two senders is a transient fault: the next sweep.
            assert payment.intent_id in swept.deferred, swept
            swept = await sweep()
        assert payment.intent_id in swept.confirmed, swept
    await sweeper.aclose()
    await settlement.aclose()

    assert chips.balance(winner.address) == 400  # once
    async with db.engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT status, confirmed_at, tx_hash FROM payout_intents WHERE id = :i"),
                {"i": payment.intent_id},
            )
        ).one()
    assert row.status == "confirmed" and row.confirmed_at is not None
    # Both drivers name the one transaction that paid it.
    assert by_tournament.tx_hash and row.tx_hash == by_tournament.tx_hash
