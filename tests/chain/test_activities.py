"""The on-chain money activities inside a real Temporal worker, against a real anvil.

Faults are injected where money is most at risk: after a payout was broadcast but before its
receipt was read, an attempt that died without leaving a trace, and the node going away.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, ClassVar

import pytest
from temporalio import activity
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.worker import Worker

from activities.chain import ChainMoneyActivities
from activities.chain_support import chain_id_of
from devtools.chain import ChainInfo, Wallet
from tests.chain.conftest import Chips, chain_activities
from tests.chain.money_workflows import MoneyMoveWorkflow, PayPrizeWorkflow
from tests.chain.proxy import RpcProxy
from wire.messages import MoneyMove, Permit, PrizePayment


async def _run(
    client: Client, task_queue: str, acts: ChainMoneyActivities, workflow: Any, *args: Any
) -> Any:
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[PayPrizeWorkflow, MoneyMoveWorkflow],
        activities=[acts.collect_entry, acts.refund_entry, acts.pay_prize],
    ):
        return await client.execute_workflow(
            workflow, args=list(args), id=f"money-{uuid.uuid4().hex[:10]}", task_queue=task_queue
        )


def _refusal(err: WorkflowFailureError) -> ApplicationError:
    assert isinstance(err.cause, ActivityError)
    assert isinstance(err.cause.cause, ApplicationError)
    return err.cause.cause


def _entry(chips: Chips, player: Wallet, tournament: str, amount: int, **permit: Any) -> MoneyMove:
    signed = chips.permit(player, permit.pop("value", amount), **permit)
    return MoneyMove(
        key=f"{tournament}:entry:{player.address}:1",
        tournament_id=tournament,
        player_id=player.address,
        amount=amount,
        permit=Permit(**signed),
        wallet=player.address,
    )


def _fund_vault(chips: Chips, chain: ChainInfo, amount: int) -> None:
    player = chips.new_wallet(amount)
    permit = chips.permit(player, amount)
    chips.send(
        chain.operator_key,
        chips.vault.functions.depositWithPermit(
            chain_id_of("pool"),
            chain_id_of(f"pool:entry:{uuid.uuid4().hex}"),
            player.address,
            amount,
            permit["deadline"],
            permit["v"],
            bytes.fromhex(permit["r"][2:]),
            bytes.fromhex(permit["s"][2:]),
        ),
    )


def _prize(winner: Wallet, amount: int) -> PrizePayment:
    tournament = f"t-{uuid.uuid4().hex[:8]}"
    return PrizePayment(
        intent_id=f"{tournament}:payout:1",
        tournament_id=tournament,
        position=1,
        player_id=winner.address,
        amount=amount,
        destination=winner.address,
    )


async def test_entry_and_refund_move_exactly_once_per_key(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo
) -> None:
    acts = chain_activities(chain)
    player = chips.new_wallet(1_000)
    move = _entry(chips, player, "t-entry", 100)
    first = await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "collect_entry", move)
    assert first.applied and first.reference.startswith("tx:0x")
    again = await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "collect_entry", move)
    assert not again.applied
    assert chips.balance(player.address) == 900

    refund = move.model_copy(
        update={"key": "t-entry:refund:1", "permit": None, "entry_key": move.key}
    )
    assert (
        await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "refund_entry", refund)
    ).applied
    retried = await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "refund_entry", refund)
    assert not retried.applied
    assert chips.balance(player.address) == 1_000


async def test_a_refund_never_exceeds_the_deposit(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo
) -> None:
    acts = chain_activities(chain)
    player = chips.new_wallet(1_000)
    move = _entry(chips, player, "t-over", 100)
    await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "collect_entry", move)
    greedy = move.model_copy(
        update={"key": "t-over:refund:1", "amount": 101, "permit": None, "entry_key": move.key}
    )
    with pytest.raises(WorkflowFailureError) as info:
        await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "refund_entry", greedy)
    refusal = _refusal(info.value)
    assert refusal.type == "chain_refund_exceeds_deposit" and refusal.non_retryable
    assert chips.balance(player.address) == 900
    assert chips.vault.functions.held(chain_id_of(move.key)).call() == 100


@pytest.mark.parametrize("change", [{"value": 99}, {"spender": "0x" + "11" * 20}])
async def test_a_permit_for_another_amount_or_spender_moves_nothing(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo, change: dict[str, Any]
) -> None:
    acts = chain_activities(chain)
    player = chips.new_wallet(1_000)
    move = _entry(chips, player, "t-mismatch", 100, **change)
    with pytest.raises(WorkflowFailureError) as info:
        await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "collect_entry", move)
    refusal = _refusal(info.value)
    assert refusal.type == "tournament_entry_fee_mismatch" and refusal.non_retryable
    assert chips.balance(player.address) == 1_000


async def test_an_expired_permit_is_refused_before_anything_is_sent(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo
) -> None:
    acts = chain_activities(chain)
    player = chips.new_wallet(1_000)
    move = _entry(chips, player, "t-expired", 100, deadline=1)
    with pytest.raises(WorkflowFailureError) as info:
        await _run(client, task_queue, acts, MoneyMoveWorkflow.run, "collect_entry", move)
    refusal = _refusal(info.value)
    assert refusal.type == "validation_error" and refusal.non_retryable
    assert "expired" in refusal.message
    assert chips.balance(player.address) == 1_000


async def test_a_payout_sent_by_an_attempt_that_died_is_not_paid_again(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo
) -> None:
    """The worker broadcast withdrawFor and died before reading the receipt or heartbeating."""
    acts = chain_activities(chain)
    winner = chips.new_wallet(0)
    _fund_vault(chips, chain, 700)
    payment = _prize(winner, 700)
    sent = chips.send(
        chain.operator_key,
        chips.vault.functions.withdrawFor(chain_id_of(payment.intent_id), winner.address, 700),
    )
    receipt = await _run(client, task_queue, acts, PayPrizeWorkflow.run, payment)
    assert receipt.applied is False
    assert receipt.tx_hash == "0x" + bytes(sent["transactionHash"]).hex()  # type: ignore[arg-type]
    assert chips.balance(winner.address) == 700


class _DiesAfterBroadcast(ChainMoneyActivities):
    """The first attempt broadcasts, then its process 'dies' before reading the receipt."""

    attempts: ClassVar[list[tuple[int, bool]]] = []  # (attempt, had the broadcast in its heartbeat)

    async def _resume_previous(self, call: Any, key: str) -> Any:
        info = activity.info()
        type(self).attempts.append((info.attempt, bool(info.heartbeat_details)))
        return await super()._resume_previous(call, key)

    async def _await_receipt(self, tx_hash: Any, sent: dict[str, Any]) -> Any:
        if len(type(self).attempts) == 1:
            raise RuntimeError("worker died after the broadcast")
        return await super()._await_receipt(tx_hash, sent)


async def test_a_payout_retried_after_the_broadcast_pays_once(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo
) -> None:
    acts = _DiesAfterBroadcast(
        chain.rpc_url,
        chain.operator_key,
        chain.vault_address,
        chain.token_address,
        start_block=chain.deploy_block,
        poll_interval=0.05,
    )
    winner = chips.new_wallet(0)
    _fund_vault(chips, chain, 300)
    payment = _prize(winner, 300)
    receipt = await _run(client, task_queue, acts, PayPrizeWorkflow.run, payment)
    assert receipt.tx_hash is not None
    assert chips.balance(winner.address) == 300
    # The retry found the broadcast in its heartbeat and finished that transaction.
    assert _DiesAfterBroadcast.attempts == [(1, False), (2, True)]
    assert chips.vault.functions.executed(chain_id_of(payment.intent_id)).call()


async def test_payouts_wait_out_an_rpc_outage_and_pay_once(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo, rpc_proxy: RpcProxy
) -> None:
    acts = chain_activities(chain, rpc_proxy.url)
    winner = chips.new_wallet(0)
    _fund_vault(chips, chain, 400)
    payment = _prize(winner, 400)
    await rpc_proxy.down()
    run = asyncio.create_task(_run(client, task_queue, acts, PayPrizeWorkflow.run, payment))
    await asyncio.sleep(3)
    assert not run.done(), "an outage must be retried, not fail the payout"
    await rpc_proxy.up()
    receipt = await asyncio.wait_for(run, 30)
    assert receipt.applied
    assert chips.balance(winner.address) == 400


class _OutageAfterBroadcast(ChainMoneyActivities):
    """The node goes away right after accepting the transaction, for a couple of seconds."""

    proxy: RpcProxy
    outages = 0

    async def _await_receipt(self, tx_hash: Any, sent: dict[str, Any]) -> Any:
        if type(self).outages == 0:
            type(self).outages += 1
            await self.proxy.down()
            asyncio.get_running_loop().call_later(2, lambda: asyncio.ensure_future(self.proxy.up()))
        return await super()._await_receipt(tx_hash, sent)


async def test_an_outage_between_broadcast_and_receipt_pays_once(
    client: Client, task_queue: str, chips: Chips, chain: ChainInfo, rpc_proxy: RpcProxy
) -> None:
    acts = _OutageAfterBroadcast(
        rpc_proxy.url,
        chain.operator_key,
        chain.vault_address,
        chain.token_address,
        start_block=chain.deploy_block,
        poll_interval=0.05,
        request_timeout=2,
    )
    acts.proxy = rpc_proxy
    winner = chips.new_wallet(0)
    _fund_vault(chips, chain, 250)
    payment = _prize(winner, 250)
    receipt = await _run(client, task_queue, acts, PayPrizeWorkflow.run, payment)
    assert receipt.tx_hash is not None
    assert chips.balance(winner.address) == 250
    assert _OutageAfterBroadcast.outages == 1
