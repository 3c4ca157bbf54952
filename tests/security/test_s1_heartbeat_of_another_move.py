"""S1 (security review 3): an on-chain entry paid for free, and an unpaid prize marked
confirmed, by putting another move's heartbeat on an attempt.

A money activity heartbeats the transaction it broadcast, and a retry resumes it: a mined
receipt was the answer. Whoever polls the task queue can heartbeat an attempt with any sealed
details it lifted (another deposit's, another payout's) and fail it; the next attempt then
answered ``applied=True`` with the other move's transaction, for an entry that deposited
nothing or a prize that was never withdrawn. Now an attempt resumes only a transaction of its
own call: signed by the operator, to the vault, with exactly this call's input, under this
move's key. A lifted heartbeat is ignored and the chain's own record decides.

The codec half (each move's payloads bound to the move, so a heartbeat of one does not even
open as another's) is tested in tests/security/test_s1_money_activity_ids.py.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.chain_support import chain_id_of
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from wire.messages import MoneyMove, Permit, PrizePayment

FEE = 100


def _recording() -> tuple[ActivityEnvironment, list[Any]]:
    env = ActivityEnvironment()
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.append(details[-1])
    return env, beats


def _resuming(details: Any) -> ActivityEnvironment:
    """An attempt whose previous attempt (as far as Temporal says) heartbeated ``details``."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=2, heartbeat_details=[details])
    return env


def _entry(tid: str, who: str, permit: Permit) -> MoneyMove:
    return MoneyMove(
        key=f"{tid}:entry:{who}:1",
        tournament_id=tid,
        player_id=who,
        amount=FEE,
        permit=permit,
        wallet=permit.owner,
    )


@pytest.mark.parametrize("names_this_move", [False, True])
async def test_a_deposit_heartbeat_lifted_from_another_entry_does_not_pay_this_one(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
    names_this_move: bool,
) -> None:
    acts = chain_activities(chain)
    tid = f"s1-{uuid.uuid4().hex[:8]}"
    victim = chips.new_wallet(1_000)
    env, beats = _recording()
    paid = await env.run(
        acts.collect_entry, _entry(tid, "victim", Permit.model_validate(chips.permit(victim, FEE)))
    )
    assert paid.applied and beats, "the victim's deposit heartbeats its transaction"
    lifted = dict(beats[-1])

    attacker = chips.new_wallet(0)  # nothing to pay with
    garbage = Permit(
        owner=attacker.address,
        spender=chain.vault_address,
        value=FEE,
        deadline=2**40,
        v=27,
        r="0x" + "01" * 32,
        s="0x" + "01" * 32,
    )
    move = _entry(tid, "attacker", garbage)
    if names_this_move:  # even a heartbeat that names this move must be this call's transaction
        lifted["move"] = move.key
    with pytest.raises(ApplicationError) as info:
        await _resuming(lifted).run(acts.collect_entry, move)
    assert info.value.type == "validation_error" and info.value.non_retryable
    assert "not signed by" in info.value.message
    owner = chips.vault.functions.entries(chain_id_of(move.key)).call()[1]
    assert int(owner, 16) == 0, "the attacker's entry holds no deposit"
    assert chips.balance(victim.address) == 1_000 - FEE


async def test_a_payout_heartbeat_lifted_from_another_intent_does_not_confirm_this_one(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    acts = chain_activities(chain)
    tid = f"s1p-{uuid.uuid4().hex[:8]}"
    # The pool: two entries' fees.
    for who in ("a", "b"):
        payer = chips.new_wallet(FEE)
        await ActivityEnvironment().run(
            acts.collect_entry, _entry(tid, who, Permit.model_validate(chips.permit(payer, FEE)))
        )
    first, second = chips.new_wallet(0), chips.new_wallet(0)

    def prize(place: int, to: str) -> PrizePayment:
        return PrizePayment(
            intent_id=f"{tid}:payout:{place}",
            tournament_id=tid,
            position=place,
            player_id=to,
            amount=FEE,
            destination=to,
        )

    env, beats = _recording()
    one = await env.run(acts.pay_prize, prize(1, first.address))
    assert one.applied and beats

    two = await _resuming(beats[-1]).run(acts.pay_prize, prize(2, second.address))
    # Not the first payout's transaction passed off as this one's: this intent really paid.
    assert two.applied and two.tx_hash != one.tx_hash
    assert chips.balance(second.address) == FEE
    assert chips.vault.functions.executed(chain_id_of(f"{tid}:payout:2")).call()


@pytest.mark.parametrize("written_before_moves_were_named", [False, True])
async def test_an_attempt_still_resumes_its_own_transaction(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
    written_before_moves_were_named: bool,
) -> None:
    """The check lets the real case through: a retry of the same payout finds its own mined
    transaction and sends nothing new, also from a heartbeat an older worker wrote (no move
    key in it: this call's input is what identifies it)."""
    acts = chain_activities(chain)
    tid = f"s1o-{uuid.uuid4().hex[:8]}"
    payer = chips.new_wallet(FEE)
    await ActivityEnvironment().run(
        acts.collect_entry, _entry(tid, "a", Permit.model_validate(chips.permit(payer, FEE)))
    )
    winner = chips.new_wallet(0)
    payment = PrizePayment(
        intent_id=f"{tid}:payout:1",
        tournament_id=tid,
        position=1,
        player_id=winner.address,
        amount=FEE,
        destination=winner.address,
    )
    env, beats = _recording()
    first = await env.run(acts.pay_prize, payment)
    details = dict(beats[-1])
    if written_before_moves_were_named:
        del details["move"]
    again = await _resuming(details).run(acts.pay_prize, payment)
    assert again.applied and again.tx_hash == first.tx_hash  # resumed, not a new send
    assert chips.balance(winner.address) == FEE
