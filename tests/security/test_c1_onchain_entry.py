"""C1 (security review): an on-chain seat for free.

Two of its attack paths, on anvil with the real vault and token, and the public view that
listed every entrant's wallet and account:
- the confused deputy: the vault ignores a permit that fails and spends whatever allowance
  the named owner has standing, and the service relayed any owner a caller named, so a
  garbage permit naming a victim with an ``approve`` on the vault paid the attacker's entry
  from the victim's wallet. Now the worker checks the EIP-712 signature against the token's
  current nonce (and the deadline) before anything is sent.
- a second entrant naming a wallet that already paid: the vault's "held" probe made it look
  paid with nothing sent. Now a tournament takes each wallet for one active entrant only.

Still open (docs/security.md): deposits keyed per entry in the vault, and wallets bound to
accounts by a signed challenge.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from db.engine import Database
from sng.chain import ChainInfo
from sng.settings import Settings
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.integration.helpers import create, credit, player
from workflows.messages import (
    CreateTournamentInput,
    MoneyMove,
    PayEntryInput,
    Permit,
    RegisterInput,
)
from workflows.tournament import TournamentWorkflow

ENTRY = 100


async def test_a_garbage_permit_cannot_spend_a_victims_standing_allowance(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    victim = chips.new_wallet(1_000)
    chips.send(victim.key, chips.token.functions.approve(chain.vault_address, 10**18))
    acts = chain_activities(chain)
    garbage = Permit(
        owner=victim.address, spender=chain.vault_address, value=ENTRY, deadline=2**40, v=27,
        r="0x" + "01" * 32, s="0x" + "01" * 32,
    )  # fmt: skip
    tid = f"c1-{uuid.uuid4().hex[:8]}"
    move = MoneyMove(
        key=f"{tid}:entry:attacker:1", tournament_id=tid, player_id="attacker", amount=ENTRY,
        permit=garbage, wallet=victim.address,
    )  # fmt: skip
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.collect_entry, move)
    assert info.value.type == "validation_error" and info.value.non_retryable
    assert "not signed by" in info.value.message
    assert chips.balance(victim.address) == 1_000


async def test_a_second_entrant_cannot_name_a_wallet_that_already_paid(
    client: Client,
    db: Database,
    task_queue: str,
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    from worker import build_worker

    tid = f"c1w-{uuid.uuid4().hex[:8]}"
    settings = {
        "seats": 3, "entryFee": ENTRY, "startingStack": 300, "actionTimeoutSeconds": 60,
        "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 600},
    }  # fmt: skip
    wallet = chips.new_wallet(1_000)
    async with build_worker(client, db, task_queue, chain=chain_activities(chain)):
        handle = await client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(tournament_id=tid, name=tid, settings=settings,
                                  hand_pause_ms=0, money_backend="chain"),
            id=f"tournament-{tid}",
            task_queue=task_queue,
        )  # fmt: skip
        for player in ("honest", "thief"):
            await handle.execute_update(
                TournamentWorkflow.register, RegisterInput(player_id=player, owner_user_id=player)
            )
        permit = Permit.model_validate(chips.permit(wallet, ENTRY))
        await handle.execute_update(
            TournamentWorkflow.pay_entry,
            PayEntryInput(player_id="honest", amount=ENTRY, permit=permit),
        )
        # The thief names the paid wallet, with any signature: refused, nothing is paid.
        forged = permit.model_copy(update={"r": "0x" + "02" * 32})
        with pytest.raises(WorkflowUpdateFailedError) as info:
            await handle.execute_update(
                TournamentWorkflow.pay_entry,
                PayEntryInput(player_id="thief", amount=ENTRY, permit=forged),
            )
        assert isinstance(info.value.cause, ApplicationError)
        assert info.value.cause.type == "validation_error"
        view = await handle.query(TournamentWorkflow.state)
        status = {e.player_id: e.status.value for e in view.entrants}
        assert status == {"honest": "paid", "thief": "reserved"}
        assert chips.balance(wallet.address) == 1_000 - ENTRY
        await handle.terminate("test done")


async def test_the_public_tournament_view_shows_no_wallets_or_accounts(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        user = f"c1v-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, user, 1_000)
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=player(settings, user))
        assert r.status_code == 200, r.text
        r = await http.get(f"/tournaments/{tid}")
        assert r.status_code == 200, r.text
        body = r.json()
        assert [e["playerId"] for e in body["entrants"]] == [user]
        text = r.text
        for secret in ("ownerUserId", "wallet", "advisorAgentId", "destination"):
            assert secret not in text, (secret, text)
