"""C1 (security review): an on-chain seat for free.

Two of its attack paths, on anvil with the real vault and token, and the public view that
listed every entrant's wallet and account:
- the confused deputy: the vault ignores a permit that fails and spends whatever allowance
  the named owner has standing, and the service relayed any owner a caller named, so a
  garbage permit naming a victim with an ``approve`` on the vault paid the attacker's entry
  from the victim's wallet. Now the worker checks the EIP-712 signature against the token's
  current nonce (and the deadline) before anything is sent.
- a second entrant naming a wallet that already paid: the vault's "held" probe made it look
  paid with nothing sent. Now a tournament takes each wallet for one active entrant only, and
  the vault records each deposit under its entry's own key: the "already done" probe asks
  for exactly this entry, so another entry's deposit proves nothing.
- pay, then leave with the other seat: the vault refunded by (tournament, wallet), so the
  free second seat's refund returned the first seat's fee. Now a refund names its entry and
  returns at most what that entry deposited.

Wallets bound to accounts by a signed challenge: tests/security/test_c1_wallet_binding.py.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.integration.helpers import create, credit, player
from wire.messages import (
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
        owner=victim.address,
        spender=chain.vault_address,
        value=ENTRY,
        deadline=2**40,
        v=27,
        r="0x" + "01" * 32,
        s="0x" + "01" * 32,
    )
    tid = f"c1-{uuid.uuid4().hex[:8]}"
    move = MoneyMove(
        key=f"{tid}:entry:attacker:1",
        tournament_id=tid,
        player_id="attacker",
        amount=ENTRY,
        permit=garbage,
        wallet=victim.address,
    )
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.collect_entry, move)
    assert info.value.type == "validation_error" and info.value.non_retryable
    assert "not signed by" in info.value.message
    assert chips.balance(victim.address) == 1_000


def _entry_move(tid: str, seat: str, permit: Permit) -> MoneyMove:
    return MoneyMove(
        key=f"{tid}:entry:{seat}:1",
        tournament_id=tid,
        player_id=seat,
        amount=ENTRY,
        permit=permit,
        wallet=permit.owner,
    )


async def test_another_entrys_deposit_does_not_pay_this_entry(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    """The activity alone, as a workflow bug or a forged call would drive it."""
    wallet = chips.new_wallet(1_000)
    acts = chain_activities(chain)
    tid = f"c1e-{uuid.uuid4().hex[:8]}"
    first = _entry_move(tid, "first", Permit.model_validate(chips.permit(wallet, ENTRY)))
    assert (await ActivityEnvironment().run(acts.collect_entry, first)).applied
    # The same key again: done already, nothing moves (the exact key is what the probe asks).
    assert not (await ActivityEnvironment().run(acts.collect_entry, first)).applied
    assert chips.balance(wallet.address) == 1_000 - ENTRY
    # A second entry naming the paid wallet with a garbage signature: not "already paid".
    garbage = first.permit.model_copy(update={"r": "0x" + "02" * 32})  # type: ignore[union-attr]
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.collect_entry, _entry_move(tid, "second", garbage))
    assert info.value.type == "validation_error" and info.value.non_retryable
    # With a real permit it is a deposit of its own.
    second = _entry_move(tid, "second", Permit.model_validate(chips.permit(wallet, ENTRY)))
    assert (await ActivityEnvironment().run(acts.collect_entry, second)).applied
    assert chips.balance(wallet.address) == 1_000 - 2 * ENTRY


async def test_a_seat_that_never_paid_cannot_refund_another_seats_fee(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    wallet = chips.new_wallet(1_000)
    acts = chain_activities(chain)
    tid = f"c1r-{uuid.uuid4().hex[:8]}"
    paid = _entry_move(tid, "paid", Permit.model_validate(chips.permit(wallet, ENTRY)))
    await ActivityEnvironment().run(acts.collect_entry, paid)
    free = MoneyMove(
        key=f"{tid}:refund:free:1",
        tournament_id=tid,
        player_id="free",
        amount=ENTRY,
        wallet=wallet.address,
        entry_key=f"{tid}:entry:free:1",
    )
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.refund_entry, free)
    assert info.value.non_retryable
    assert chips.balance(wallet.address) == 1_000 - ENTRY  # the paid seat's fee stays in escrow
    refund = free.model_copy(
        update={"key": f"{tid}:refund:paid:1", "player_id": "paid", "entry_key": paid.key}
    )
    assert (await ActivityEnvironment().run(acts.refund_entry, refund)).applied
    assert chips.balance(wallet.address) == 1_000


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
        "seats": 3,
        "entryFee": ENTRY,
        "startingStack": 300,
        "actionTimeoutSeconds": 60,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    wallet = chips.new_wallet(1_000)
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
