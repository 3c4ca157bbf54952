"""Wallets bound to accounts by a signed challenge (EIP-4361, "Sign-In with Ethereum").

The service relays an on-chain permit only for a wallet bound to the caller (security review
C1): naming someone else's wallet, even one with a standing allowance on the vault, gets
nothing relayed. Binding is two steps:

1. :func:`issue_challenge` writes an EIP-4361 message for (caller, address) with a single-use
   nonce, valid for :data:`CHALLENGE_TTL`, and keeps its exact text;
2. :func:`bind` consumes the challenge (once, atomically, before it expires), recovers the
   EIP-191 signer of the stored text and binds the wallet if it is the address the challenge
   named. Nothing of the client's text is parsed: the signature is checked against the
   message the service wrote. A challenge is spent by its first attempt, right or wrong.

A wallet binds to one account; an account binds at most :data:`MAX_WALLETS` wallets and holds
at most :data:`MAX_OPEN_CHALLENGES` unexpired challenges. (The ``siwe`` package pins web3 < 8,
older than ours; the message format is small and only the service writes it.)
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.engine import Database
from db.models import WalletBinding, WalletChallenge, utcnow
from domain.errors import DomainError, ErrorCode

CHALLENGE_TTL = timedelta(minutes=10)
MAX_WALLETS = 5
MAX_OPEN_CHALLENGES = 5
STATEMENT = "Bind this wallet to your account so the service may relay your entry-fee permits."


@dataclass(frozen=True)
class Challenge:
    message: str
    nonce: str
    expires_at: datetime


def challenge_text(
    *,
    domain: str,
    uri: str,
    address: str,
    chain_id: int,
    nonce: str,
    issued: datetime,
    expires: datetime,
) -> str:
    """The EIP-4361 message (its ABNF: no statement line breaks, RFC 3339 times)."""
    return (
        f"{domain} wants you to sign in with your Ethereum account:\n{address}\n\n"
        f"{STATEMENT}\n\n"
        f"URI: {uri}\nVersion: 1\nChain ID: {chain_id}\nNonce: {nonce}\n"
        f"Issued At: {_rfc3339(issued)}\nExpiration Time: {_rfc3339(expires)}"
    )


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


async def issue_challenge(
    db: Database, *, user_id: str, address: str, domain: str, uri: str, chain_id: int
) -> Challenge:
    address = to_checksum_address(address)
    now = utcnow().replace(microsecond=0)
    nonce = secrets.token_hex(16)
    expires = now + CHALLENGE_TTL
    async with db.session() as session:
        await session.exec(
            delete(WalletChallenge).where(
                col(WalletChallenge.user_id) == user_id,
                col(WalletChallenge.expires_at) <= now,
            )
        )
        open_now = (
            await session.exec(
                select(func.count()).where(
                    col(WalletChallenge.user_id) == user_id,
                    col(WalletChallenge.used_at).is_(None),
                )
            )
        ).one()
        if open_now >= MAX_OPEN_CHALLENGES:
            raise DomainError(
                ErrorCode.WALLET_LIMIT_REACHED,
                f"at most {MAX_OPEN_CHALLENGES} open wallet challenges; sign one or wait"
                f" {int(CHALLENGE_TTL.total_seconds() // 60)} minutes",
            )
        message = challenge_text(
            domain=domain,
            uri=uri,
            address=address,
            chain_id=chain_id,
            nonce=nonce,
            issued=now,
            expires=expires,
        )
        session.add(
            WalletChallenge(
                nonce=nonce, user_id=user_id, address=address, message=message, expires_at=expires
            )
        )
        await session.commit()
    return Challenge(message=message, nonce=nonce, expires_at=expires)


def to_checksum_address(address: str) -> str:
    # eth_utils and eth_account are imported on first use: importing them costs seconds
    # (eth_account's BLS tables), which every API process paid at start (`sng dev`, issue 28).
    from eth_utils.address import to_checksum_address as checksum

    return str(checksum(address))


def _signer(message: str, signature: str) -> str | None:
    from eth_account import Account
    from eth_account.messages import encode_defunct

    try:
        return str(Account.recover_message(encode_defunct(text=message), signature=signature))
    except Exception:  # a malformed signature (bad v, not on the curve): no signer
        return None


async def bind(db: Database, *, user_id: str, nonce: str, signature: str) -> WalletBinding:
    """Spend the caller's challenge and bind its wallet if the signature is the wallet's."""
    now = utcnow()
    async with db.session() as session:
        spent = await session.exec(
            update(WalletChallenge)
            .where(
                col(WalletChallenge.nonce) == nonce,
                col(WalletChallenge.user_id) == user_id,
                col(WalletChallenge.used_at).is_(None),
                col(WalletChallenge.expires_at) > now,
            )
            .values(used_at=now)
            .returning(col(WalletChallenge.address), col(WalletChallenge.message))
        )
        row = spent.first()
        await session.commit()
    if row is None:
        raise DomainError(
            ErrorCode.WALLET_CHALLENGE_INVALID,
            "no open challenge with this nonce for you (unknown, used or expired): ask again",
            field="nonce",
        )
    address, message = row
    if _signer(message, signature) != address:
        raise DomainError(
            ErrorCode.WALLET_CHALLENGE_INVALID,
            f"the signature is not {address}'s over the challenge's message",
            field="signature",
        )
    async with db.session() as session:
        if len(await _bound(session, user_id)) >= MAX_WALLETS and not await session.get(
            WalletBinding, address
        ):
            raise DomainError(
                ErrorCode.WALLET_LIMIT_REACHED, f"an account binds at most {MAX_WALLETS} wallets"
            )
        await session.exec(
            insert(WalletBinding)
            .values(address=address, user_id=user_id, bound_at=now)
            .on_conflict_do_nothing(index_elements=["address"])
        )
        await session.commit()
        binding = await session.get(WalletBinding, address)
    assert binding is not None
    if binding.user_id != user_id:
        raise DomainError(
            ErrorCode.WALLET_BOUND_ELSEWHERE, f"{address} is bound to another account"
        )
    return binding


async def _bound(session: AsyncSession, user_id: str) -> list[WalletBinding]:
    rows = await session.exec(select(WalletBinding).where(WalletBinding.user_id == user_id))
    return list(rows.all())


async def wallets_of(db: Database, user_id: str) -> list[WalletBinding]:
    async with db.session() as session:
        return sorted(await _bound(session, user_id), key=lambda b: b.bound_at)


async def is_bound_to(db: Database, address: str, user_id: str) -> bool:
    async with db.session() as session:
        binding = await session.get(WalletBinding, to_checksum_address(address))
    return binding is not None and binding.user_id == user_id


async def unbind(db: Database, address: str, user_id: str) -> bool:
    async with db.session() as session:
        result = await session.exec(
            delete(WalletBinding).where(
                col(WalletBinding.address) == to_checksum_address(address),
                col(WalletBinding.user_id) == user_id,
            )
        )
        await session.commit()
    return bool(result.rowcount)
