"""S2 (security review 3): anyone with 1 chip could block any player's on-chain entry for good.

The vault let an entry's *owner* call ``depositWithPermit`` with any entry id, and entry ids
are keccak of predictable keys (``<tournament>:entry:<player>:<n>``, every part public). So
an attacker deposited 1 chip under the victim's next entry id first (or front-ran the
operator's transaction), and the victim's real payment was refused for ever with
``chain_deposit_refused`` (``entry ... was deposited by <attacker> for another move``); five
chips blocked all five of a player's entries. Now only the operator deposits: the attacker's
deposit reverts, nothing of theirs is recorded under the victim's id, and the victim's entry
is paid as usual. The vault's own rule is in tests/chain/test_contracts.py.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from eth_account import Account
from temporalio.testing import ActivityEnvironment
from web3 import Web3

from activities.chain import ChainMoneyActivities
from activities.chain_support import chain_id_of, revert_of
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from wire.keys import entry_key
from wire.messages import MoneyMove, Permit

FEE = 100


async def test_a_stranger_cannot_take_a_victims_entry_id_first(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    tid = f"s2-{uuid.uuid4().hex[:8]}"
    victim_key = entry_key(tid, "victim", 1)  # predictable: every part is public
    attacker = chips.new_wallet(1)
    permit = chips.permit(attacker, 1)
    squat = chips.vault.functions.depositWithPermit(
        chain_id_of(tid),
        chain_id_of(victim_key),
        attacker.address,
        1,
        permit["deadline"],
        permit["v"],
        bytes.fromhex(permit["r"][2:]),
        bytes.fromhex(permit["s"][2:]),
    )
    with pytest.raises(Exception) as info:
        chips.send(attacker.key, squat)
    revert = revert_of(info.value)
    assert revert is not None and revert.name == "OwnableUnauthorizedAccount", info.value
    assert chips.balance(attacker.address) == 1
    assert int(chips.vault.functions.entries(chain_id_of(victim_key)).call()[1], 16) == 0

    victim = chips.new_wallet(1_000)
    acts = chain_activities(chain)
    paid = await ActivityEnvironment().run(
        acts.collect_entry,
        MoneyMove(
            key=victim_key,
            tournament_id=tid,
            player_id="victim",
            amount=FEE,
            permit=Permit.model_validate(chips.permit(victim, FEE)),
            wallet=victim.address,
        ),
    )
    assert paid.applied
    assert chips.balance(victim.address) == 1_000 - FEE
    assert chips.vault.functions.held(chain_id_of(victim_key)).call() == FEE


async def test_the_worker_tells_an_old_vault_from_the_current_one(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
    w3: Web3,  # noqa: F811
) -> None:
    """A deployed vault cannot be upgraded: the worker says at its start when the one it is
    given still takes deposits from entrants (the build before this fix)."""
    assert not await chain_activities(chain).vault_takes_deposits_from_anyone()
    # The vault's build from before this fix (99d6002's contracts/build), kept as a fixture.
    old = json.loads((Path(__file__).parents[1] / "chain" / "vault_before_s2.json").read_text())
    operator = Account.from_key(chain.operator_key)
    factory = w3.eth.contract(abi=old["abi"], bytecode=old["bytecode"])
    tx = factory.constructor(chain.token_address, operator.address).build_transaction(
        {"from": operator.address, "nonce": w3.eth.get_transaction_count(operator.address)}
    )
    receipt = w3.eth.wait_for_transaction_receipt(
        w3.eth.send_raw_transaction(operator.sign_transaction(tx).raw_transaction), timeout=30
    )
    legacy = ChainMoneyActivities(
        chain.rpc_url, chain.operator_key, receipt["contractAddress"], chain.token_address
    )
    assert await legacy.vault_takes_deposits_from_anyone()
