"""The calling player's own account: balance, and the dev faucet (dev mode only)."""

from __future__ import annotations

import secrets

from fastapi import APIRouter
from pydantic import Field

from api.auth import CurrentPlayer
from api.deps import DbDep, SettingsDep
from api.errors import ApiError
from api.routes.admin import Balance
from db import ledger
from domain.errors import ErrorCode
from workflows.messages import WireModel

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
