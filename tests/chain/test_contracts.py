"""The vault's rules on a real anvil: exact pulls, front-run permits, one deposit per entry,
refunds bounded by the entry and paid to its wallet, once-only payouts."""

from __future__ import annotations

import pytest
from eth_account import Account
from web3 import Web3
from web3.logs import DISCARD

from activities.chain_support import chain_id_of, revert_of
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips


def _deposit_call(chips: Chips, tournament: str, permit: dict, amount: int, entry: str = "1"):  # type: ignore[no-untyped-def]
    return chips.vault.functions.depositWithPermit(
        chain_id_of(tournament),
        _entry_id(tournament, entry),
        permit["owner"],
        amount,
        permit["deadline"],
        permit["v"],
        bytes.fromhex(permit["r"][2:]),
        bytes.fromhex(permit["s"][2:]),
    )


def _entry_id(tournament: str, entry: str = "1") -> bytes:
    return chain_id_of(f"{tournament}:entry:{entry}")


def _revert_name(chips: Chips, sender: str, call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as info:
        call.call({"from": sender})
    revert = revert_of(info.value)
    assert revert is not None, info.value
    return revert.name


def test_deposit_pulls_exactly_the_permitted_amount(chips: Chips, chain: ChainInfo) -> None:
    player = chips.new_wallet(1_000)
    vault_before = chips.balance(chain.vault_address)
    chips.send(chain.operator_key, _deposit_call(chips, "t-exact", chips.permit(player, 100), 100))
    assert chips.balance(player.address) == 900
    assert chips.balance(chain.vault_address) == vault_before + 100
    stored = chips.vault.functions.entries(_entry_id("t-exact")).call()
    assert tuple(stored) == (chain_id_of("t-exact"), player.address, 100, 0)
    assert chips.token.functions.allowance(player.address, chain.vault_address).call() == 0


def test_a_larger_standing_allowance_still_pulls_exactly_the_amount(
    chips: Chips, chain: ChainInfo
) -> None:
    player = chips.new_wallet(1_000)
    chips.send(player.key, chips.token.functions.approve(chain.vault_address, 300))
    stale = chips.permit(player, 999)  # does not match the amount: the permit fails, caught
    chips.send(chain.operator_key, _deposit_call(chips, "t-standing", stale, 100))
    assert chips.balance(player.address) == 900
    assert chips.vault.functions.held(_entry_id("t-standing")).call() == 100
    assert chips.token.functions.allowance(player.address, chain.vault_address).call() == 200


def test_a_front_run_permit_does_not_block_the_deposit(chips: Chips, chain: ChainInfo) -> None:
    player = chips.new_wallet(1_000)
    griefer = chips.new_wallet(0)
    permit = chips.permit(player, 100)
    # Someone copies the signed permit from the mempool and submits it to the token first.
    chips.send(
        griefer.key,
        chips.token.functions.permit(
            permit["owner"],
            permit["spender"],
            100,
            permit["deadline"],
            permit["v"],
            bytes.fromhex(permit["r"][2:]),
            bytes.fromhex(permit["s"][2:]),
        ),
    )
    chips.send(chain.operator_key, _deposit_call(chips, "t-front", permit, 100))
    assert chips.vault.functions.held(_entry_id("t-front")).call() == 100
    assert chips.balance(player.address) == 900


def test_a_bad_permit_without_allowance_is_refused_with_the_tokens_error(
    chips: Chips, chain: ChainInfo
) -> None:
    player = chips.new_wallet(1_000)
    stranger = Account.create()
    forged = chips.permit(player, 100)
    forged["owner"] = stranger.address  # signed by someone else
    call = _deposit_call(chips, "t-bad", forged, 100)
    assert _revert_name(chips, chain.operator_address, call) == "ERC20InsufficientAllowance"
    expired = chips.permit(player, 100, deadline=1)
    call = _deposit_call(chips, "t-bad", expired, 100)
    assert _revert_name(chips, chain.operator_address, call) == "ERC20InsufficientAllowance"


def test_only_the_operator_may_deposit(chips: Chips, chain: ChainInfo) -> None:
    """Not a stranger, and not the entrant either: an entrant who could deposit could take
    any entry id first (security review 3, S2; tests/security/test_s2_entry_squat.py)."""
    player = chips.new_wallet(1_000)
    other = chips.new_wallet(0)
    call = _deposit_call(chips, "t-who", chips.permit(player, 100), 100)
    assert _revert_name(chips, other.address, call) == "OwnableUnauthorizedAccount"
    assert _revert_name(chips, player.address, call) == "OwnableUnauthorizedAccount"
    chips.send(chain.operator_key, call)
    assert chips.vault.functions.held(_entry_id("t-who")).call() == 100


def test_an_entry_is_deposited_once(chips: Chips, chain: ChainInfo) -> None:
    player = chips.new_wallet(1_000)
    chips.send(chain.operator_key, _deposit_call(chips, "t-once", chips.permit(player, 100), 100))
    again = _deposit_call(chips, "t-once", chips.permit(player, 100), 100)
    assert _revert_name(chips, chain.operator_address, again) == "EntryAlreadyDeposited"
    # Another entry of the same wallet in the same tournament is its own deposit.
    chips.send(
        chain.operator_key, _deposit_call(chips, "t-once", chips.permit(player, 100), 100, "2")
    )
    assert chips.balance(player.address) == 800
    assert chips.vault.functions.held(_entry_id("t-once", "2")).call() == 100


def test_refunds_are_bounded_by_what_the_entry_still_holds(chips: Chips, chain: ChainInfo) -> None:
    player = chips.new_wallet(1_000)
    entry = _entry_id("t-refund")
    chips.send(chain.operator_key, _deposit_call(chips, "t-refund", chips.permit(player, 100), 100))
    refund = chips.vault.functions.refund
    assert _revert_name(chips, chain.operator_address, refund(entry, 101)) == (
        "RefundExceedsDeposit"
    )
    chips.send(chain.operator_key, refund(entry, 60))
    chips.send(chain.operator_key, refund(entry, 40))
    assert _revert_name(chips, chain.operator_address, refund(entry, 1)) == "RefundExceedsDeposit"
    # An entry never deposited (another seat, another tournament) refunds nothing.
    assert _revert_name(chips, chain.operator_address, refund(_entry_id("t-refund", "2"), 1)) == (
        "UnknownEntry"
    )
    assert _revert_name(chips, player.address, refund(entry, 1)) == "OwnableUnauthorizedAccount"
    assert chips.balance(player.address) == 1_000


def test_withdraw_for_executes_each_intent_once(chips: Chips, chain: ChainInfo) -> None:
    player = chips.new_wallet(1_000)
    winner = chips.new_wallet(0)
    chips.send(chain.operator_key, _deposit_call(chips, "t-pay", chips.permit(player, 500), 500))
    intent = chain_id_of("t-pay:payout:1")
    withdraw = chips.vault.functions.withdrawFor(intent, winner.address, 500)
    assert _revert_name(chips, player.address, withdraw) == "OwnableUnauthorizedAccount"
    assert chips.vault.functions.executed(intent).call() is False
    receipt = chips.send(chain.operator_key, withdraw)
    assert chips.vault.functions.executed(intent).call() is True
    assert _revert_name(chips, chain.operator_address, withdraw) == "IntentAlreadyExecuted"
    assert chips.balance(winner.address) == 500
    events = chips.vault.events.Withdrawn().process_receipt(receipt, errors=DISCARD)  # type: ignore[arg-type]
    (event,) = events
    assert event["args"]["intentId"] == intent and event["args"]["amount"] == 500


def test_ids_are_keccak_of_the_service_ids() -> None:
    assert chain_id_of("t-1") == Web3.keccak(text="t-1")
