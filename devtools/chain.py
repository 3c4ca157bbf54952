"""A local development chain: anvil on loopback with the chip token and the vault deployed.

anvil comes from the npm package ``@foundry-rs/anvil`` installed under ``contracts/node_modules``
(``npm ci --prefix contracts``); its per-platform package ships the real binary, so nothing
else is downloaded. The chain state is dumped to ``<data_dir>/anvil-state.json`` on exit and
loaded on the next start, and the deployment is remembered in ``<data_dir>/chain.json``, so a
second ``start_dev_chain`` on the same directory resumes the same contracts and balances.

The operator is anvil's first well-known development account; demo wallets are derived from
fixed strings. Both keys are public: ``core.settings`` refuses the operator key in prod.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eth_account import Account
from eth_utils.crypto import keccak
from web3 import Web3
from web3.types import TxReceipt

from activities.chain_support import artifact
from core.settings import ANVIL_DEV_OPERATOR_KEY

ROOT = Path(__file__).resolve().parents[1]
DEMO_CHIPS = 1_000_000
DEMO_ETH = 10 * 10**18


@dataclass(frozen=True)
class Wallet:
    address: str
    key: str


@dataclass(frozen=True)
class ChainInfo:
    rpc_url: str
    chain_id: int
    operator_key: str
    operator_address: str
    token_address: str
    vault_address: str
    deploy_block: int
    wallets: list[Wallet] = field(default_factory=list)


def anvil_binary() -> Path:
    """The binary from ``@foundry-rs/anvil-<os>-<arch>`` under ``contracts/node_modules``."""
    os_name = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system())
    arch = {"x86_64": "amd64", "AMD64": "amd64", "arm64": "arm64", "aarch64": "arm64"}.get(
        platform.machine()
    )
    exe = "anvil.exe" if os_name == "win32" else "anvil"
    path = ROOT / "contracts" / "node_modules" / "@foundry-rs" / f"anvil-{os_name}-{arch}"
    path = path / "bin" / exe
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `npm ci --prefix contracts`")
    return path


def demo_wallets(count: int) -> list[Wallet]:
    wallets = []
    for i in range(count):
        key = "0x" + keccak(text=f"sng demo wallet {i}").hex()
        wallets.append(Wallet(Account.from_key(key).address, key))
    return wallets


def _transact(w3: Web3, key: str, tx: dict[str, Any]) -> TxReceipt:
    account = Account.from_key(key)
    tx = {**tx, "from": account.address, "nonce": w3.eth.get_transaction_count(account.address)}
    tx.setdefault("chainId", w3.eth.chain_id)
    if "gas" not in tx:
        tx["gas"] = w3.eth.estimate_gas(tx)  # type: ignore[arg-type]
    tx.setdefault("maxFeePerGas", 2 * w3.eth.gas_price + 10**9)
    tx.setdefault("maxPriorityFeePerGas", 10**9)
    signed = account.sign_transaction(tx)
    receipt = w3.eth.wait_for_transaction_receipt(
        w3.eth.send_raw_transaction(signed.raw_transaction), timeout=60
    )
    if receipt["status"] != 1:
        raise RuntimeError(f"transaction {receipt['transactionHash'].hex()} reverted")
    return receipt


def deploy(w3: Web3, operator_key: str) -> tuple[str, str, int]:
    """Deploy the chip token and the vault owned by the operator: (token, vault, block)."""
    operator = Account.from_key(operator_key).address
    addresses: list[str] = []
    first_block = None
    for name, args in (("ChipToken", [operator]), ("TournamentVault", None)):
        art = artifact(name)
        ctor_args = args if args is not None else [addresses[0], operator]
        contract = w3.eth.contract(abi=art["abi"], bytecode=art["bytecode"])
        tx = contract.constructor(*ctor_args).build_transaction({"from": operator, "gas": 0})
        del tx["gas"]
        receipt = _transact(w3, operator_key, dict(tx))
        addresses.append(str(receipt["contractAddress"]))
        first_block = first_block if first_block is not None else receipt["blockNumber"]
    assert first_block is not None
    return addresses[0], addresses[1], first_block


def fund(w3: Web3, info: ChainInfo, wallet: str, chips: int) -> None:
    """Give a wallet gas money (anvil cheat) and mint it ``chips`` (dev and demo only)."""
    w3.provider.make_request("anvil_setBalance", [wallet, hex(DEMO_ETH)])  # type: ignore[arg-type]
    token = w3.eth.contract(
        address=Web3.to_checksum_address(info.token_address), abi=artifact("ChipToken")["abi"]
    )
    tx = token.functions.mint(wallet, chips).build_transaction(
        {"from": info.operator_address, "gas": 200_000}
    )
    _transact(w3, info.operator_key, dict(tx))


@dataclass
class DevChain:
    info: ChainInfo
    process: subprocess.Popen[bytes]

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM lets anvil dump its state for the next start; then make sure it is gone."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_anvil(data_dir: Path, port: int, *, log: Path | None = None) -> subprocess.Popen[bytes]:
    data_dir.mkdir(parents=True, exist_ok=True)
    out = open(log or data_dir / "anvil.log", "ab")  # the child process owns it
    args = [
        str(anvil_binary()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--state",
        str(data_dir / "anvil-state.json"),
        "--state-interval",
        "5",
    ]
    return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for_rpc(w3: Web3, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"anvil exited with {proc.returncode}; see its log")
        try:
            w3.eth.block_number  # noqa: B018 - the probe
            return
        except Exception:
            time.sleep(0.1)
    raise TimeoutError(f"anvil did not answer within {timeout}s")


def start_dev_chain(data_dir: Path, port: int, *, wallets: int = 4) -> DevChain:
    """Start (or resume) anvil, deploy the contracts once, fund ``wallets`` demo wallets."""
    data_dir = data_dir.resolve()
    proc = start_anvil(data_dir, port)
    rpc_url = f"http://127.0.0.1:{port}"
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 10}))
    try:
        _wait_for_rpc(w3, proc, timeout=30)
        saved = data_dir / "chain.json"
        info = _resume(w3, saved, rpc_url)
        if info is None:
            token, vault, block = deploy(w3, ANVIL_DEV_OPERATOR_KEY)
            info = ChainInfo(
                rpc_url=rpc_url,
                chain_id=w3.eth.chain_id,
                operator_key=ANVIL_DEV_OPERATOR_KEY,
                operator_address=Account.from_key(ANVIL_DEV_OPERATOR_KEY).address,
                token_address=token,
                vault_address=vault,
                deploy_block=block,
                wallets=demo_wallets(wallets),
            )
            for wallet in info.wallets:
                fund(w3, info, wallet.address, DEMO_CHIPS)
            saved.write_text(json.dumps(asdict(info), indent=2) + "\n")
            os.chmod(saved, 0o600)
    except BaseException:
        DevChain(ChainInfo("", 0, "", "", "", "", 0), proc).stop()
        raise
    return DevChain(info, proc)


def _resume(w3: Web3, saved: Path, rpc_url: str) -> ChainInfo | None:
    """The saved deployment when the chain still has its code (state loaded), else None."""
    if not saved.exists():
        return None
    data = json.loads(saved.read_text())
    data["wallets"] = [Wallet(**w) for w in data["wallets"]]
    info = ChainInfo(**{**data, "rpc_url": rpc_url})
    if w3.eth.get_code(Web3.to_checksum_address(info.vault_address)) in (b"", None):
        return None
    return info
