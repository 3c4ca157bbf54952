"""Whole tournaments on the chain backend: permits in, prizes out through the vault, exactly
once — with the RPC down for a minute while one settles, and PostgreSQL down while another
confirms its payouts."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlmodel import select
from temporalio.client import Client
from web3 import Web3

from activities.chain_support import chain_id_of
from db.engine import Database
from db.migrate import upgrade_async
from db.models import Event
from devtools.chain import ChainInfo
from devtools.devstack import free_port
from devtools.pg import EmbeddedPostgres
from tests.chain.conftest import Chips, chain_activities
from tests.chain.proxy import RpcProxy
from tests.integration.bots import play, shove
from wire.messages import CreateTournamentInput, PayEntryInput, Permit, RegisterInput
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
        "seats": 3,
        "entryFee": ENTRY,
        "rakeFee": 10,
        "startingStack": 300,
        "actionTimeoutSeconds": 60,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    wallets = [chips.new_wallet(1_000) for _ in range(3)]
    players = [f"{tid}-{i}" for i in range(3)]
    # The worker reaches the chain through a proxy the test can take down.
    money = chain_activities(chain, rpc_proxy.url)
    async with build_worker(client, db, task_queue, chain=money):
        handle = await client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(
                tournament_id=tid,
                name=tid,
                settings=settings,
                hand_pause_ms=0,
                money_backend="chain",
            ),
            id=f"tournament-{tid}",
            task_queue=task_queue,
        )
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
        await asyncio.sleep(60)  # a minute-long outage: the payouts keep retrying
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
    # Seed: "tournament_payout_settled { position, userId, amount, txHash }": on chain, txHash
    # is the vault's payout transaction, mined and successful.
    async with db.session() as s:
        settled = [
            e.payload
            for e in (await s.exec(select(Event).where(Event.tournament_id == tid))).all()
            if e.type == "tournament_payout_settled"
        ]
    by_position = {p.position: p for p in final.payouts}
    assert sorted(e["position"] for e in settled) == sorted(by_position)
    for event in settled:
        payout = by_position[event["position"]]
        assert (event["userId"], event["amount"]) == (payout.player_id, payout.amount)
        assert event["txHash"] == payout.tx_hash and event["txHash"].startswith("0x")
        receipt = chips.w3.eth.get_transaction_receipt(event["txHash"])
        assert receipt["status"] == 1
        assert receipt["to"] == Web3.to_checksum_address(chain.vault_address)


async def test_postgres_down_while_payouts_confirm_pays_once(
    client: Client, task_queue: str, chain: ChainInfo, chips: Chips, tmp_path: Path
) -> None:
    """The prize is on-chain, PostgreSQL dies before the confirmation is written: the
    confirmation retries until the database is back, and nothing is paid twice."""
    from worker import build_worker

    pg = EmbeddedPostgres(tmp_path / "pg", free_port())
    pg.start()
    pg.create_database("confirm")
    await upgrade_async(pg.url("confirm"))
    db = Database(pg.url("confirm"))
    tid = f"chainpg-{uuid.uuid4().hex[:8]}"
    settings = {
        "seats": 2,
        "entryFee": ENTRY,
        "startingStack": 300,
        "actionTimeoutSeconds": 60,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    wallets = [chips.new_wallet(1_000) for _ in range(2)]
    players = [f"{tid}-{i}" for i in range(2)]
    first_intent = chain_id_of(f"{tid}:payout:1")
    stopped = asyncio.Event()

    async def stop_postgres_once_paid() -> None:
        # The instant the vault has executed the first prize, before its row is confirmed.
        while not chips.vault.functions.executed(first_intent).call():  # noqa: ASYNC110 - polls a chain
            await asyncio.sleep(0.02)
        pg.kill()
        stopped.set()

    try:
        async with build_worker(client, db, task_queue, chain=chain_activities(chain)):
            handle = await client.start_workflow(
                TournamentWorkflow.run,
                CreateTournamentInput(
                    tournament_id=tid,
                    name=tid,
                    settings=settings,
                    hand_pause_ms=0,
                    money_backend="chain",
                ),
                id=f"tournament-{tid}",
                task_queue=task_queue,
            )
            for player, wallet in zip(players, wallets, strict=True):
                await handle.execute_update(
                    TournamentWorkflow.register,
                    RegisterInput(player_id=player, owner_user_id=player),
                )
                permit = Permit.model_validate(chips.permit(wallet, ENTRY))
                await handle.execute_update(
                    TournamentWorkflow.pay_entry,
                    PayEntryInput(player_id=player, amount=ENTRY, permit=permit),
                )
            watcher = asyncio.create_task(stop_postgres_once_paid())
            await play(client, f"table-{tid}-1", players, shove)
            await asyncio.wait_for(stopped.wait(), 60)
            await asyncio.sleep(5)  # the confirmation is retrying against a dead database
            assert (await handle.query(TournamentWorkflow.state)).state == "settling"
            pg.start()
            final = await asyncio.wait_for(handle.result(), 120)
            await watcher
        assert final.state == "closed"
        [prize] = final.payouts
        winner = wallets[players.index(prize.player_id)]
        assert prize.amount == 2 * ENTRY
        assert chips.balance(winner.address) == 900 + 2 * ENTRY  # paid once, not twice
        await db.engine.dispose()
        async with db.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text("SELECT status, tx_hash FROM payout_intents WHERE tournament_id = :t"),
                    {"t": tid},
                )
            ).all()
        assert [r.status for r in rows] == ["confirmed"] and rows[0].tx_hash
    finally:
        await db.dispose()
        pg.remove()
