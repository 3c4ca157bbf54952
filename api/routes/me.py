"""The calling player's (or agent's) own account: balance, the dev faucet (dev mode only), and
the wallets bound to it for on-chain entries."""

from __future__ import annotations

import secrets
from datetime import datetime

from fastapi import APIRouter, Path, Request
from pydantic import Field

from api.auth import CurrentPlayer
from api.deps import DbDep, SettingsDep
from api.errors import ApiError
from api.routes.admin import Balance
from db import ledger, wallets
from domain.errors import ErrorCode
from wire.messages import ADDRESS, WireModel

router = APIRouter(prefix="/me", tags=["me"])

FAUCET_MAX = 100_000


class FaucetBody(WireModel):
    amount: int = Field(gt=0, le=FAUCET_MAX, strict=True)


@router.get("/balance", response_model=Balance, response_model_by_alias=True)
async def my_balance(caller: CurrentPlayer, db: DbDep) -> Balance:
    return Balance(
        user_id=caller.user_id,
        balance=await ledger.balance(db, ledger.user_account(caller.user_id)),
    )


@router.post("/faucet", response_model=Balance, response_model_by_alias=True)
async def faucet(
    body: FaucetBody, caller: CurrentPlayer, db: DbDep, settings: SettingsDep
) -> Balance:
    """Free virtual chips for trying things out; refused outside dev mode."""
    if settings.env != "dev":
        raise ApiError(ErrorCode.FORBIDDEN, "the faucet only runs in dev mode")
    await ledger.transfer(
        db,
        key=f"faucet:{secrets.token_hex(8)}",
        source=ledger.MINT,
        destination=ledger.user_account(caller.user_id),
        amount=body.amount,
        memo="dev faucet",
    )
    return Balance(
        user_id=caller.user_id,
        balance=await ledger.balance(db, ledger.user_account(caller.user_id)),
    )


# -- wallets: bound by a signed challenge (EIP-4361), db/wallets.py ----------------------------


class ChallengeBody(WireModel):
    address: str = Field(pattern=ADDRESS, max_length=42)


class ChallengeView(WireModel):
    message: str
    """The exact text to sign with the wallet (``personal_sign``, EIP-191)."""
    nonce: str
    expires_at: datetime


class BindBody(WireModel):
    nonce: str = Field(pattern=r"^[0-9a-f]{32}$", max_length=32)
    signature: str = Field(pattern=r"^0x[0-9a-fA-F]{130}$", max_length=132)


class WalletView(WireModel):
    address: str
    bound_at: datetime


@router.post("/wallets/challenge", response_model=ChallengeView, response_model_by_alias=True)
async def wallet_challenge(
    body: ChallengeBody, request: Request, caller: CurrentPlayer, db: DbDep, settings: SettingsDep
) -> ChallengeView:
    """Step 1 of binding a wallet: a message for the wallet to sign, valid 10 minutes, once."""
    challenge = await wallets.issue_challenge(
        db,
        user_id=caller.owner,
        address=body.address,
        domain=request.url.netloc,
        uri=str(request.base_url).rstrip("/"),
        chain_id=settings.chain_id,
    )
    return ChallengeView(
        message=challenge.message, nonce=challenge.nonce, expires_at=challenge.expires_at
    )


@router.post("/wallets", response_model=WalletView, response_model_by_alias=True, status_code=201)
async def bind_wallet(body: BindBody, caller: CurrentPlayer, db: DbDep) -> WalletView:
    """Step 2: the wallet's signature over the challenge's message binds it to the caller's
    account (an agent binds to its owner's: the owner pays its agents' entries)."""
    binding = await wallets.bind(
        db, user_id=caller.owner, nonce=body.nonce, signature=body.signature
    )
    return WalletView(address=binding.address, bound_at=binding.bound_at)


@router.get("/wallets", response_model=list[WalletView], response_model_by_alias=True)
async def my_wallets(caller: CurrentPlayer, db: DbDep) -> list[WalletView]:
    return [
        WalletView(address=b.address, bound_at=b.bound_at)
        for b in await wallets.wallets_of(db, caller.owner)
    ]


@router.delete("/wallets/{address}", status_code=204)
async def unbind_wallet(
    caller: CurrentPlayer, db: DbDep, address: str = Path(pattern=ADDRESS, max_length=42)
) -> None:
    """Entries already paid keep their wallet (refunds and prizes still go to it)."""
    if not await wallets.unbind(db, address, caller.owner):
        raise ApiError(ErrorCode.NOT_FOUND, "no such wallet bound to you")
