"""A whole tournament on the chain backend: permits in, prizes out through the vault, exactly
once — with the RPC taken down while the tournament settles."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client
from web3 import Web3

from activities.chain_support import chain_id_of
from db.engine import Database
from sng.chain import ChainInfo
from tests.chain.conftest import Chips, chain_activities
from tests.chain.proxy import RpcProxy
from tests.integration.bots import play, shove
from workflows.messages import CreateTournamentInput, PayEntryInput, Permit, RegisterInput
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow
ENTRY = 100


async def test_onchain_tournament_settles_through_an_rpc_outage(
    client: Client,
    db: Database,
    task_queue: str,
    chain: ChainInfo,
    chips: Chips,
    rpc_proxy: RpcProxy,
) -> None:
    from worker import build_worker

    tid = f"chain-{uuid.uuid4().hex[:8]}"
    settings = {
        "seats": 3, "entryFee": ENTRY, "rakeFee": 10, "startingStack": 300, "actionTimeoutSeconds": 60,
        "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 600},
    }  # fmt: skip
    wallets = [chips.new_wallet(1_000) for _ in range(3)]
    players = [f"{tid}-{i}" for i in range(3)]
    # The worker reaches the chain through a proxy the test can take down.
    money = chain_activities(chain, rpc_proxy.url)
    async with build_worker(client, db, task_queue, chain=money):
        handle = await client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(tournament_id=tid, name=tid, settings=settings, hand_pause_ms=0,
                                  money_backend="chain"),
            id=f"tournament-{tid}",
            task_queue=task_queue,
        )  # fmt: skip
        for player, wallet in zip(players, wallets, strict=True):
            await handle.execute_update(
                TournamentWorkflow.register, RegisterInput(player_id=player, owner_user_id=player)
            )
            permit = Permit.model_validate(chips.permit(wallet, ENTRY))
            await handle.execute_update(
                TournamentWorkflow.pay_entry,
                PayEntryInput(player_id=player, amount=ENTRY, permit=permit),
            )
        assert [chips.balance(w.address) for w in wallets] == [900, 900, 900]
        assert chips.balance(chain.vault_address) >= 3 * ENTRY

        # Play needs no chain: take the RPC down before the end, so settlement meets the outage.
        for _ in range(100):
            if (await handle.query(TournamentWorkflow.state)).state == "playing":
                break
            await asyncio.sleep(0.2)
        await rpc_proxy.down()
        await play(client, f"table-{tid}-1", players, shove)
        for _ in range(50):
            if (await handle.query(TournamentWorkflow.state)).state == "settling":
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(3)  # payouts are retrying against a dead RPC
        assert (await handle.query(TournamentWorkflow.state)).state == "settling"
        await rpc_proxy.up()
        final = await asyncio.wait_for(handle.result(), 120)

    assert final.state == "closed"
    prizes = {p.player_id: p.amount for p in final.payouts}
    assert sum(prizes.values()) == 3 * (ENTRY - 10)
    for player, wallet in zip(players, wallets, strict=True):
        assert chips.balance(wallet.address) == 900 + prizes.get(player, 0)
    for payout in final.payouts:
        assert (
            payout.destination == Web3.to_checksum_address(payout.destination) or payout.destination
        )
        assert chips.vault.functions.executed(chain_id_of(payout.intent_id)).call()
        assert payout.tx_hash
