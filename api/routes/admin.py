"""Operator routes behind the service key: create, list, inspect, cancel, force-end, credit,
read any ledger account's balance."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query, status
from pydantic import Field, field_validator
from sqlmodel import col, select

from api.auth import ServiceKey
from api.deps import DbDep, TournamentId
from api.errors import ApiError
from api.services import tournaments
from api.services.accounts import Balance
from api.services.tournaments import CreatedTournament, CreateTournamentBody
from api.state import AppStateDep
from db import ledger
from db.models import Tournament
from db.wallets import to_checksum_address
from domain.errors import ErrorCode
from wire.keys import credit_key
from wire.messages import (
    ADDRESS,
    TournamentView,
    WireModel,
)

router = APIRouter(prefix="/admin", tags=["admin"], dependencies=[ServiceKey])


@router.post(
    "/tournaments",
    status_code=status.HTTP_201_CREATED,
    response_model=CreatedTournament,
    response_model_by_alias=True,
)
async def create_tournament(body: CreateTournamentBody, state: AppStateDep) -> CreatedTournament:
    return await tournaments.start(state, body)


class CancelBody(WireModel):
    reason: str = Field(default="cancelled by an operator", max_length=200)


@router.post(
    "/tournaments/{tournament_id}/cancel",
    response_model=TournamentView,
    response_model_by_alias=True,
)
async def cancel_tournament(
    tournament_id: TournamentId, body: CancelBody, state: AppStateDep
) -> TournamentView:
    """Cancel while registering: every paid entry is refunded, then the state is cancelled."""
    return await tournaments.cancel(state, tournament_id, body.reason)


WalletAddress = Annotated[str, Field(pattern=ADDRESS)]
IntentId = Annotated[str, Field(min_length=1, max_length=200)]


class RetryPayoutsBody(WireModel):
    destinations: Annotated[
        dict[IntentId, WalletAddress], Field(default_factory=dict, max_length=100)
    ]
    """Intent id -> the wallet to pay, for refused payouts whose wallet is not known: a
    checksummed (or all one case) address, not the zero address; sent on checksummed."""

    @field_validator("destinations")
    @classmethod
    def _real_wallets(cls, destinations: dict[str, str]) -> dict[str, str]:
        out = {}
        for intent_id, address in destinations.items():
            mixed = address[2:] != address[2:].lower() and address[2:] != address[2:].upper()
            checksummed = to_checksum_address(address)
            if (mixed and checksummed != address) or int(address, 16) == 0:
                # A typo would freeze the prize: the chain refuses it for good.
                raise ValueError(f"{address} is not a wallet address (checksum or zero)")
            out[intent_id] = checksummed
        return out


@router.post(
    "/tournaments/{tournament_id}/payouts/retry",
    response_model=TournamentView,
    response_model_by_alias=True,
)
async def retry_payouts(
    tournament_id: TournamentId, state: AppStateDep, body: RetryPayoutsBody | None = None
) -> TournamentView:
    """Try a settling tournament's refused payouts again now (each intent pays at most once);
    the reconciler does the same on its own schedule (docs/operations.md). ``destinations``
    names the wallet of each refused payout whose winning entry's wallet is not known
    (``payout_wallet_unknown``); a payout with a known destination is never redirected
    (``422 validation_error``)."""
    destinations = body.destinations if body is not None else {}
    return await tournaments.retry_payouts(state, tournament_id, destinations)


class CreditBody(WireModel):
    user_id: str = Field(min_length=1, max_length=100)
    amount: int = Field(gt=0, le=10**15, strict=True)
    idempotency_key: str = Field(min_length=1, max_length=150)
    """Sending the same key again credits nothing more."""


@router.post("/ledger/credit", response_model=Balance, response_model_by_alias=True)
async def credit(body: CreditBody, db: DbDep) -> Balance:
    """Credit virtual chips to a user's account (operators; idempotent per key)."""
    result = await ledger.transfer(
        db,
        key=credit_key(body.idempotency_key),
        source=ledger.MINT,
        destination=ledger.user_account(body.user_id),
        amount=body.amount,
        memo="operator credit",
    )
    account = ledger.user_account(body.user_id)
    return Balance(
        user_id=body.user_id,
        balance=await ledger.balance(db, account),
        account_id=account,
        applied=result.applied,
    )


ACCOUNT_ID = r"^[!-.0-~]{1,200}$"
"""A ledger account id (``user:<userId>``, ``escrow:<tournamentId>``, ``room:<roomId>:<player>``,
``house``, ``mint``): printable ASCII without ``/``."""


class AccountBalance(WireModel):
    account_id: str
    kind: str
    """What the account is: ``user``, ``escrow``, ``room``, ``house`` or ``mint``."""
    balance: int


@router.get(
    "/accounts/{account_id}/balance",
    response_model=AccountBalance,
    response_model_by_alias=True,
)
async def account_balance(
    db: DbDep, account_id: Annotated[str, Path(pattern=ACCOUNT_ID, max_length=200)]
) -> AccountBalance:
    """Any ledger account's balance (operators): a player's or an agent's owner's
    (``user:<userId>``), a tournament's escrow, a room seat's stack, the house. An account no
    posting ever touched is ``404 not_found``."""
    balance = await ledger.account_balance(db, account_id)
    if balance is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"no ledger account {account_id!r}")
    return AccountBalance(account_id=account_id, kind=account_id.split(":", 1)[0], balance=balance)


class ForceEndBody(WireModel):
    table_id: str = Field(min_length=1, max_length=64)
    """The tournament's id (the seed system called tournaments tables)."""
    reason: str = Field(default="force-ended by an operator", max_length=200)


@router.post("/force-end-tournament", response_model=TournamentView, response_model_by_alias=True)
async def force_end_tournament(body: ForceEndBody, state: AppStateDep) -> TournamentView:
    """Stop a wedged tournament: live seats ranked by stack, then the normal end (409 unless
    playing and the current level is force_end_min_level_age_seconds old)."""
    return await tournaments.force_end(state, body.table_id, body.reason)


class AdminTournamentRow(WireModel):
    tournament_id: str
    name: str
    state: str
    kind: str
    seats: int
    entry_fee: int
    registered_count: int
    field_size: int | None
    current_level: int
    level_started_at: datetime | None
    created_at: datetime
    workflow_id: str


class AdminPayoutRow(WireModel):
    intent_id: str
    position: int
    player_id: str
    amount: int
    destination: str
    status: str
    tx_hash: str | None
    failure_reason: str | None
    confirmed_at: datetime | None


class AdminTournamentDetail(WireModel):
    tournament: TournamentView
    payout_intents: list[AdminPayoutRow]


@router.get("/tournaments", response_model=list[AdminTournamentRow], response_model_by_alias=True)
async def admin_list(
    db: DbDep,
    state: Annotated[str | None, Query(max_length=20)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[AdminTournamentRow]:
    """Every tournament from the read model, newest first (filter by ``state``)."""
    query = select(Tournament).order_by(col(Tournament.created_at).desc()).limit(limit)
    if state:
        query = query.where(Tournament.state == state)
    async with db.session() as session:
        rows = await session.exec(query)
        return [
            AdminTournamentRow(
                tournament_id=t.id,
                name=t.name,
                state=t.state,
                kind=t.kind,
                seats=t.seats,
                entry_fee=t.entry_fee,
                registered_count=t.registered_count,
                field_size=t.field_size,
                current_level=t.current_level,
                level_started_at=t.level_started_at,
                created_at=t.created_at,
                workflow_id=t.workflow_id,
            )
            for t in rows
        ]


@router.get(
    "/tournaments/{tournament_id}",
    response_model=AdminTournamentDetail,
    response_model_by_alias=True,
)
async def admin_detail(tournament_id: TournamentId, state: AppStateDep) -> AdminTournamentDetail:
    """The tournament's view (the read model's, where it is the workflow's own: see
    ``GET /tournaments/{id}``) plus the payout intents as the money legs recorded them."""
    view = await tournaments.current_view(state, tournament_id)
    rows = [
        AdminPayoutRow(
            intent_id=i.id,
            position=i.position,
            player_id=i.player_id,
            amount=i.amount,
            destination=i.destination,
            status=i.status,
            tx_hash=i.tx_hash,
            failure_reason=i.failure_reason,
            confirmed_at=i.confirmed_at,
        )
        for i in await tournaments.payout_intents(state.db, tournament_id)
    ]
    return AdminTournamentDetail(tournament=view, payout_intents=rows)
