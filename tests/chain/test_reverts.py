"""Reverts reported in each node's own shape reduce to one Revert; transport errors do not."""

from __future__ import annotations

import aiohttp
import pytest
from eth_abi.abi import encode
from web3.exceptions import ContractCustomError, ContractLogicError, Web3RPCError

from activities.chain_support import Revert, revert_of
from activities.chain_support import decode_revert_data as decode

INTENT = bytes(range(32))
ALREADY = "0x541904fb" + encode(["bytes32"], [INTENT]).hex()
REASON = "0x08c379a0" + encode(["string"], ["Ownable: caller is not the owner"]).hex()


@pytest.mark.parametrize(
    "exc",
    [
        ContractCustomError(ALREADY, data=ALREADY),  # web3 over anvil / geth (error code 3)
        Web3RPCError(
            "execution reverted",
            rpc_response={"error": {"code": 3, "message": "execution reverted", "data": ALREADY}},
        ),
        ValueError(
            {"message": "Error: VM Exception", "data": {"message": "revert", "data": ALREADY}}
        ),
        ValueError(
            {
                "message": "VM Exception while processing transaction: revert",
                "data": {"0xabc": {"error": "revert", "return": ALREADY}},
            }
        ),  # ganache
        RuntimeError(f"execution reverted: reverted with custom error {ALREADY}"),
        Exception("TransactionFailed", bytes.fromhex(ALREADY[2:])),  # eth-tester
    ],
)
def test_every_shape_of_a_custom_error_decodes_to_the_same_revert(exc: Exception) -> None:
    revert = revert_of(exc)
    assert revert == Revert(
        "IntentAlreadyExecuted",
        {"intentId": "0x" + INTENT.hex()},
        f"IntentAlreadyExecuted(intentId=0x{INTENT.hex()})",
        ALREADY,
    )


def test_require_strings_panics_and_bare_messages_are_reverts_too() -> None:
    assert revert_of(ContractLogicError("execution reverted", data=REASON)) == Revert(
        "Error",
        {"message": "Ownable: caller is not the owner"},
        "Ownable: caller is not the owner",
        REASON,
    )
    panic = "0x4e487b71" + encode(["uint256"], [0x11]).hex()
    assert revert_of(ValueError({"code": 3, "message": "reverted", "data": panic})).name == "Panic"
    bare = revert_of(ValueError("execution reverted: not enough chips"))
    assert bare is not None and bare.reason == "not enough chips"
    assert decode("0xdeadbeef").name == "unknown"


@pytest.mark.parametrize(
    "exc",
    [
        aiohttp.ClientConnectionError("Cannot connect to host 127.0.0.1:1"),
        TimeoutError(),
        Web3RPCError(
            "nonce too low", rpc_response={"error": {"code": -32000, "message": "nonce too low"}}
        ),
    ],
)
def test_transport_and_node_errors_are_not_reverts(exc: Exception) -> None:
    assert revert_of(exc) is None
