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

import uuid

import pytest
from temporalio.testing import ActivityEnvironment

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
