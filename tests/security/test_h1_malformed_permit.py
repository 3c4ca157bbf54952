"""H1 (security review): one malformed permit froze an on-chain tournament.

Out-of-range permit fields (a deadline of 2**256, v = 300, a 33-byte r, non-hex s) made web3
raise while the vault call was built; the activity retried that forever while ``pay_entry``
held the tournament's lock, so nobody could register, pay, leave or be cancelled. Now the API
refuses such a permit with a coded 422 naming the field, whatever the money backend, and the
chain activity turns any encoding error into a non-retryable ``validation_error``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from devtools.chain import ChainInfo
from tests.chain.conftest import (  # noqa: F401
    Chips,
    chain,
    chain_activities,
    chips,
    dev_chain,
    rpc_proxy,
    w3,
)
from tests.chain.proxy import RpcProxy
from tests.integration.helpers import create, credit, player
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    MoneyMove,
    PayEntryInput,
    Permit,
    RegisterInput,
    UnregisterInput,
)
from workflows.tournament import TournamentWorkflow

GOOD = {
    "owner": "0x" + "ab" * 20,
    "spender": "0x" + "cd" * 20,
    "value": 100,
    "deadline": 2**40,
    "v": 27,
    "r": "0x" + "11" * 32,
    "s": "0x" + "22" * 32,
}
MALFORMED = [
    ("deadline", 2**256),
    ("value", 2**256),
    ("v", 300),
    ("r", "0x" + "11" * 33),
    ("s", "0xnothex" + "0" * 58),
    ("owner", "0x" + "ab" * 19),
    ("owner", "a" * 60_000),  # bounded by the model (a body past 64 KiB is a 413, M4)
    ("value", "100"),
]


@pytest.mark.parametrize(
    ("field", "bad"), MALFORMED, ids=[f"{f}-{i}" for i, (f, _) in enumerate(MALFORMED)]
)
async def test_a_malformed_permit_is_a_coded_refusal_and_the_tournament_goes_on(
    api_url: str, settings: Settings, worker: Worker, field: str, bad: Any
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        attacker, other = (f"h1-{n}-{uuid.uuid4().hex[:6]}" for n in "ao")
        for user in (attacker, other):
            await credit(http, settings, user, 1_000)
            r = await http.post(
                f"/tournaments/{tid}/register", json={}, headers=player(settings, user)
            )
            assert r.status_code == 200, r.text
        permit = {**GOOD, field: bad}
        r = await http.post(
            f"/tournaments/{tid}/pay",
            json={"amount": 100, "permit": permit},
            headers=player(settings, attacker),
        )
        assert r.status_code == 422, r.text
        assert r.json()["code"] == "validation_error" and field in r.json()["field"], r.text
        # Nothing is held: the other entrant pays at once, and the attacker still can.
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, other)
        )
        assert r.status_code == 200, r.text
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, attacker)
        )
        assert r.status_code == 200, r.text


async def test_the_chain_activity_refuses_what_it_cannot_encode_for_good(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    """Behind the API (an input recorded before the checks): no retry can encode it, so the
    activity's refusal is final instead of a retry loop."""
    acts = chain_activities(chain)
    wallet = chips.new_wallet(1_000)
    permit = Permit.model_construct(
        **{**GOOD, "owner": wallet.address, "spender": chain.vault_address, "deadline": 2**256}
    )
    move = MoneyMove.model_construct(
        key=f"t-h1:entry:{wallet.address}:1",
        tournament_id="t-h1",
        player_id=wallet.address,
        amount=100,
        permit=permit,
        wallet=wallet.address,
    )
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.collect_entry, move)
    assert info.value.type == "validation_error" and info.value.non_retryable
    assert chips.balance(wallet.address) == 1_000


async def _stuck_fee(
    client: Client,
    task_queue: str,
    chips: Chips,  # noqa: F811
    rpc_proxy: RpcProxy,  # noqa: F811
) -> tuple[Any, Any, Permit, asyncio.Task[Any]]:
    """An on-chain tournament of three seats where "payer" registered and is paying its fee
    while the RPC is down: (handle, wallet, permit, the pay in flight)."""
    tid = f"h1-{uuid.uuid4().hex[:8]}"
    settings = {
        "seats": 3,
        "entryFee": 100,
        "startingStack": 300,
        "actionTimeoutSeconds": 60,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    wallet = chips.new_wallet(1_000)
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid, name=tid, settings=settings, hand_pause_ms=0, money_backend="chain"
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    await handle.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id="payer", owner_user_id="payer")
    )
    permit = Permit.model_validate(chips.permit(wallet, 100))
    await rpc_proxy.down()
    paying = asyncio.create_task(
        handle.execute_update(
            TournamentWorkflow.pay_entry,
            PayEntryInput(player_id="payer", amount=100, permit=permit),
        )
    )
    return handle, wallet, permit, paying


async def test_a_payment_stuck_on_the_chain_does_not_hold_registration(
    client: Client,
    db: Database,
    task_queue: str,
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
    rpc_proxy: RpcProxy,  # noqa: F811
) -> None:
    """The lock is not held across the chain round trip: with the RPC down, one entrant's
    payment waits (and retries) while others register and leave; it lands when the RPC is back,
    and the payer cannot leave or pay twice meanwhile."""
    from worker import build_worker

    async with build_worker(client, db, task_queue, chain=chain_activities(chain, rpc_proxy.url)):
        handle, wallet, permit, paying = await _stuck_fee(client, task_queue, chips, rpc_proxy)
        await asyncio.sleep(1)
        # Others go on while the payment waits for the chain (on the reviewed main these
        # waited for the lock, that is, for the RPC to come back).
        for user in ("other", "third"):
            await asyncio.wait_for(
                handle.execute_update(
                    TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
                ),
                20,
            )
        await asyncio.wait_for(
            handle.execute_update(
                TournamentWorkflow.unregister, UnregisterInput(player_id="third")
            ),
            20,
        )
        for refused in (
            handle.execute_update(
                TournamentWorkflow.unregister, UnregisterInput(player_id="payer")
            ),
            handle.execute_update(
                TournamentWorkflow.pay_entry,
                PayEntryInput(player_id="payer", amount=100, permit=permit),
            ),
        ):
            with pytest.raises(WorkflowUpdateFailedError) as info:
                await asyncio.wait_for(refused, 20)
            assert isinstance(info.value.cause, ApplicationError)
            assert info.value.cause.type == "invalid_state"
        assert not paying.done()
        await rpc_proxy.up()
        result = await asyncio.wait_for(paying, 120)
        assert result.status.value == "paid"
        assert chips.balance(wallet.address) == 900
        await handle.terminate("test done")


async def test_a_cancel_waits_for_a_stuck_fee_and_refunds_it(
    client: Client,
    db: Database,
    task_queue: str,
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
    rpc_proxy: RpcProxy,  # noqa: F811
) -> None:
    """An operator's cancel that comes while a fee is on its way waits for it (so the fee is
    refunded with the others), and what comes meanwhile is refused, not left for later."""
    from worker import build_worker

    async with build_worker(client, db, task_queue, chain=chain_activities(chain, rpc_proxy.url)):
        handle, wallet, _, paying = await _stuck_fee(client, task_queue, chips, rpc_proxy)
        await asyncio.sleep(1)
        cancelling = asyncio.create_task(
            handle.execute_update(TournamentWorkflow.cancel, CancelInput(reason="test"))
        )
        await asyncio.sleep(1)
        with pytest.raises(WorkflowUpdateFailedError) as info:
            await asyncio.wait_for(
                handle.execute_update(
                    TournamentWorkflow.register,
                    RegisterInput(player_id="late", owner_user_id="late"),
                ),
                20,
            )
        assert isinstance(info.value.cause, ApplicationError)
        assert info.value.cause.type == "invalid_state"
        assert not paying.done() and not cancelling.done()
        await rpc_proxy.up()
        assert (await asyncio.wait_for(paying, 120)).status.value == "paid"
        view = await asyncio.wait_for(cancelling, 120)
        assert view.state.value == "cancelled"
        assert chips.balance(wallet.address) == 1_000
        assert await handle.result() is not None
