"""What the on-chain money backend shares: contract artifacts, ids, permits and revert shapes.

Ids: a tournament id or a payout intent id becomes the contracts' ``bytes32`` as
``keccak256(utf8(id))``, so anyone can recompute it from the service's string id.

Reverts: nodes report them in different shapes (anvil and geth: JSON-RPC error 3 with the
revert data; hardhat: the data nested one level deeper; ganache: keyed by transaction hash;
eth-tester and older nodes: only a message). :func:`revert_of` reduces all of them to one
:class:`Revert` (error name, decoded arguments, an operator-readable reason) or ``None`` when
the failure is not a revert at all (the node is down, a timeout), which callers retry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

ARTIFACTS = Path(__file__).resolve().parents[1] / "contracts" / "build"
TOKEN_NAME = "SnG Chip"
"""The token's EIP-712 domain name (ERC20Permit's ``name``); the domain version is ``"1"``."""

_ERROR_STRING = "08c379a0"
_PANIC = "4e487b71"
_HEX = re.compile(r"0x[0-9a-fA-F]{8,}")


def chain_id_of(text: str) -> bytes:
    """The contracts' ``bytes32`` for a service id: ``keccak256(utf8(text))``.

    >>> chain_id_of("t-1").hex()[:16]
    '93c40ab94e730459'
    """
    return keccak(text=text)


@cache
def artifact(name: str) -> dict[str, Any]:
    """A compiled contract from ``contracts/build`` (``abi``, ``bytecode``)."""
    data: dict[str, Any] = json.loads((ARTIFACTS / f"{name}.json").read_text())
    return data


@dataclass(frozen=True)
class Revert:
    """A definite refusal by the chain, whatever node reported it."""

    name: str
    """The custom error's name, ``Error`` for a require string, ``Panic``, or ``unknown``."""
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    data: str | None = None


@cache
def _error_selectors() -> dict[str, tuple[str, list[str], list[str]]]:
    """4-byte selector → (name, arg types, arg names) over both contracts' custom errors."""
    selectors: dict[str, tuple[str, list[str], list[str]]] = {}
    for contract in ("TournamentVault", "ChipToken"):
        for item in artifact(contract)["abi"]:
            if item["type"] != "error":
                continue
            types = [i["type"] for i in item["inputs"]]
            sig = f"{item['name']}({','.join(types)})"
            selectors[keccak(text=sig)[:4].hex()] = (
                item["name"],
                types,
                [i["name"] for i in item["inputs"]],
            )
    return selectors


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    return value


def decode_revert_data(data: str) -> Revert:
    """Decode revert return data (``0x`` + selector + ABI arguments) into a :class:`Revert`."""
    raw = data[2:] if data.startswith("0x") else data
    selector, body = raw[:8].lower(), bytes.fromhex(raw[8:]) if len(raw) > 8 else b""
    try:
        if selector == _ERROR_STRING:
            (message,) = abi_decode(["string"], body)
            return Revert("Error", {"message": message}, message, data)
        if selector == _PANIC:
            (code,) = abi_decode(["uint256"], body)
            return Revert("Panic", {"code": code}, f"panic 0x{code:02x}", data)
        known = _error_selectors().get(selector)
        if known is not None:
            name, types, names = known
            values = [_plain(v) for v in abi_decode(types, body)]
            args = dict(zip(names, values, strict=True))
            shown = ", ".join(f"{k}={v}" for k, v in args.items())
            return Revert(name, args, f"{name}({shown})", data)
    except Exception:  # malformed data: still a revert, just not one we can read
        pass
    return Revert("unknown", {}, f"reverted with data {data[:74]}", data)


def _strings_and_data(obj: Any, depth: int = 0) -> Iterator[tuple[str | None, Any]]:
    """Walk an exception's args, attributes and nested dicts: (key, value) pairs."""
    if depth > 6:
        return
    if isinstance(obj, BaseException):
        for attr in ("data", "rpc_response", "message"):
            value = getattr(obj, attr, None)
            if value is not None:
                yield attr, value
                yield from _strings_and_data(value, depth + 1)
        for arg in obj.args:
            yield None, arg
            yield from _strings_and_data(arg, depth + 1)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield str(key), value
            yield from _strings_and_data(value, depth + 1)
    elif isinstance(obj, list | tuple):
        for value in obj:
            yield None, value
            yield from _strings_and_data(value, depth + 1)


def _is_revert_text(text: str) -> bool:
    lowered = text.lower()
    return "revert" in lowered or "vm exception" in lowered or "execution failed" in lowered


def revert_of(exc: BaseException) -> Revert | None:
    """The revert an exception reports, or ``None`` when it is not a revert (retry those)."""
    data: str | None = None
    message: str | None = None
    for key, value in _strings_and_data(exc):
        if isinstance(value, bytes) and len(value) >= 4 and key in (None, "data", "return"):
            data = data or "0x" + value.hex()
        elif isinstance(value, str):
            if key in ("data", "return", "result") and _HEX.fullmatch(value):
                data = data or value
            elif _is_revert_text(value):
                message = message or value
                found = _HEX.search(value) if data is None else None
                # "reverted with custom error 0x..." / "execution reverted: 0x...": the data
                if found and ("custom error" in value or value.rstrip().endswith(found.group())):
                    data = found.group()
    if data is not None:
        return decode_revert_data(data)
    if message is not None:
        reason = re.split(r"revert(?:ed)?:?\s*", message, maxsplit=1, flags=re.I)[-1].strip()
        return Revert("Error" if reason else "unknown", {"message": reason}, reason or message)
    return None


def permit_typed_data(
    *,
    owner: str,
    token: str,
    spender: str,
    value: int,
    nonce: int,
    deadline: int,
    chain_id: int,
    name: str = TOKEN_NAME,
) -> dict[str, Any]:
    """The EIP-712 message an ERC-2612 permit signs (the token's domain, version 1)."""
    return {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "Permit": [
                {"name": "owner", "type": "address"},
                {"name": "spender", "type": "address"},
                {"name": "value", "type": "uint256"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ],
        },
        "primaryType": "Permit",
        "domain": {
            "name": name,
            "version": "1",
            "chainId": chain_id,
            "verifyingContract": to_checksum_address(token),
        },
        "message": {
            "owner": to_checksum_address(owner),
            "spender": to_checksum_address(spender),
            "value": value,
            "nonce": nonce,
            "deadline": deadline,
        },
    }


def permit_signer(typed: dict[str, Any], v: int, r: str, s: str) -> str | None:
    """Who signed this permit message (None when the signature is not a valid one)."""
    try:
        return str(
            Account.recover_message(
                encode_typed_data(full_message=typed),
                vrs=(v, int(r, 16), int(s, 16)),
            )
        )
    except Exception:  # malformed or out-of-range signature values: nobody signed it
        return None


def sign_permit(
    owner_key: str,
    *,
    token: str,
    spender: str,
    value: int,
    nonce: int,
    deadline: int,
    chain_id: int,
    name: str = TOKEN_NAME,
) -> dict[str, Any]:
    """An ERC-2612 permit signed by ``owner_key``: the fields of ``wire.messages.Permit``."""
    account = Account.from_key(owner_key)
    typed = permit_typed_data(
        owner=account.address,
        token=token,
        spender=spender,
        value=value,
        nonce=nonce,
        deadline=deadline,
        chain_id=chain_id,
        name=name,
    )
    signed = Account.sign_message(encode_typed_data(full_message=typed), owner_key)
    return {
        "owner": account.address,
        "spender": to_checksum_address(spender),
        "value": value,
        "deadline": deadline,
        "v": signed.v,
        "r": "0x" + signed.r.to_bytes(32, "big").hex(),
        "s": "0x" + signed.s.to_bytes(32, "big").hex(),
    }
