"""One real anvil for the chain tests, with the contracts deployed, plus wallet helpers.

anvil comes from ``contracts/node_modules`` (``npm ci --prefix contracts``); the chain lives in a
temporary directory and is stopped at the end of the session.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from eth_account import Account
from web3 import Web3

from activities.chain import ChainMoneyActivities
from activities.chain_support import artifact, sign_permit
from devtools.chain import ChainInfo, DevChain, Wallet, fund, start_dev_chain
from devtools.devstack import free_port
from tests.chain.proxy import RpcProxy


@pytest.fixture(scope="session")
def dev_chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevChain]:
    chain = start_dev_chain(Path(tmp_path_factory.mktemp("anvil")), free_port(), wallets=2)
    yield chain
    chain.stop()


@pytest.fixture(scope="session")
def chain(dev_chain: DevChain) -> ChainInfo:
    return dev_chain.info


@pytest.fixture(scope="session")
def w3(chain: ChainInfo) -> Web3:
    return Web3(Web3.HTTPProvider(chain.rpc_url, request_kwargs={"timeout": 10}))


class Chips:
    """Synchronous helpers over the deployed contracts for arranging and asserting."""

    def __init__(self, w3: Web3, info: ChainInfo) -> None:
        self.w3, self.info = w3, info
        self.token = w3.eth.contract(
            address=Web3.to_checksum_address(info.token_address), abi=artifact("ChipToken")["abi"]
        )
        self.vault = w3.eth.contract(
            address=Web3.to_checksum_address(info.vault_address),
            abi=artifact("TournamentVault")["abi"],
        )

    def new_wallet(self, chips: int = 10_000) -> Wallet:
        account = Account.create()
        wallet = Wallet(account.address, "0x" + bytes(account.key).hex())
        fund(self.w3, self.info, wallet.address, chips)
        return wallet

    def balance(self, address: str) -> int:
        return int(self.token.functions.balanceOf(address).call())

    def permit(
        self, owner: Wallet, value: int, *, spender: str | None = None, deadline: int | None = None
    ) -> dict[str, object]:
        return sign_permit(
            owner.key,
            token=self.info.token_address,
            spender=spender or self.info.vault_address,
            value=value,
            nonce=self.token.functions.nonces(owner.address).call(),
            deadline=deadline or int(time.time()) + 3600,
            chain_id=self.info.chain_id,
        )

    def send(self, key: str, call: object) -> dict[str, object]:
        """Send a contract call from ``key``; returns the receipt (raises on a revert)."""
        account = Account.from_key(key)
        tx = call.build_transaction(  # type: ignore[attr-defined]
            {"from": account.address, "nonce": self.w3.eth.get_transaction_count(account.address)}
        )
        signed = account.sign_transaction(tx)
        receipt = self.w3.eth.wait_for_transaction_receipt(
            self.w3.eth.send_raw_transaction(signed.raw_transaction), timeout=30
        )
        assert receipt["status"] == 1
        return dict(receipt)


@pytest.fixture(scope="session")
def chips(w3: Web3, chain: ChainInfo) -> Chips:
    return Chips(w3, chain)


@pytest.fixture
async def rpc_proxy(chain: ChainInfo) -> AsyncIterator[RpcProxy]:
    """A TCP proxy in front of anvil that tests take down and bring back (an RPC outage)."""
    proxy = RpcProxy(int(chain.rpc_url.rsplit(":", 1)[1]))
    await proxy.up()
    yield proxy
    await proxy.down()


def chain_activities(info: ChainInfo, rpc_url: str | None = None) -> ChainMoneyActivities:
    return ChainMoneyActivities(
        rpc_url or info.rpc_url,
        info.operator_key,
        info.vault_address,
        info.token_address,
        start_block=info.deploy_block,
        poll_interval=0.05,
        request_timeout=3,
    )
