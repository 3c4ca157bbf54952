"""Operator routes behind the service key: create, list, inspect, cancel, force-end, credit,
read any ledger account's balance."""

from __future__ import annotations

import asyncio
import secrets
import time
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status
from pydantic import Field
from sqlmodel import col, select
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy

from api.auth import ServiceKey
from api.deps import NAME_PATTERN, DbDep, SettingsDep, TemporalDep, TournamentId
from api.errors import QUERY_TIMEOUT, ApiError
from api.updates import execute_update
from core.settings import Settings
from db import ledger
from db.engine import Database
from db.models import PayoutIntent, Tournament
from domain.clock import level_started_at_ms
from domain.errors import ErrorCode
from domain.settings import validate_settings
from wire.ids import tournament_workflow_id
from wire.keys import credit_key
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    ForceEndInput,
    RetryPayoutsInput,
    TournamentView,
    WireModel,
)
from workflows import search_attributes as sa
from workflows.tournament import TournamentWorkflow

router = APIRouter(prefix="/admin", tags=["admin"], dependencies=[ServiceKey])


class CreateTournamentBody(WireModel):
    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    settings: dict[str, Any]
    hand_pause_ms: int = Field(default=2000, ge=0, le=60_000)
    """Pause between hands at the table (bot tables can run with 0)."""


class CreatedTournament(WireModel):
    tournament_id: str
    workflow_id: str
    state: str


@router.post(
    "/tournaments",
    status_code=status.HTTP_201_CREATED,
    response_model=CreatedTournament,
    response_model_by_alias=True,
)
async def create_tournament(
    body: CreateTournamentBody, temporal: TemporalDep, settings: SettingsDep, db: DbDep
) -> CreatedTournament:
    return await start_tournament(
        temporal,
        settings,
        name=body.name,
        raw=body.settings,
        hand_pause_ms=body.hand_pause_ms,
        db=db,
    )


ROW_WAIT = 10.0
"""How long creating a tournament waits for its workflow's first write (its read-model row)."""


async def _until_listed(db: Database, tournament_id: str) -> None:
    """Wait until the new tournament's row is in the read model (its workflow writes it
    before anything else, a fraction of a second), so that every public read answers for it
    as soon as its creation has been answered: the lobby, its events (which ask the read
    model only, security review N9) and its game state. A worker that is not running yet
    leaves the row for later: after ``ROW_WAIT`` the answer goes out anyway."""
    deadline = time.monotonic() + ROW_WAIT
    while time.monotonic() < deadline:
        async with db.session() as session:
            if await session.get(Tournament, tournament_id) is not None:
                return
        await asyncio.sleep(0.05)


async def start_tournament(
    temporal: Client,
    settings: Settings,
    *,
    name: str,
    raw: dict[str, Any],
    hand_pause_ms: int,
    tournament_id: str | None = None,
    db: Database | None = None,
) -> CreatedTournament:
    """Start a tournament's workflow: this route and the admin pages' create form share it.

    The id is 128 random bits and its workflow id can never be reused, even after the
    workflow closed (security review L11): the id is the prefix of every money key of the
    tournament, so a repeated id would make a new entry look paid or a payout look done."""
    # Refuse bad settings here with the field named, before any workflow exists.
    parsed = validate_settings(raw)
    tournament_id = tournament_id or secrets.token_hex(16)
    workflow_id = tournament_workflow_id(tournament_id)
    await temporal.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tournament_id,
            name=name,
            settings=raw,
            hand_pause_ms=hand_pause_ms,
            money_backend=settings.money_backend,
            force_end_min_level_age_seconds=settings.force_end_min_level_age_seconds,
        ),
        id=workflow_id,
        task_queue=settings.temporal_task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(sa.TOURNAMENT_STATE, "registering"),
                SearchAttributePair(sa.TABLE_KIND, str(parsed.kind)),
                SearchAttributePair(sa.SEATS, parsed.seats),
                SearchAttributePair(sa.ENTRY_FEE, parsed.entry_fee),
                SearchAttributePair(sa.CURRENT_LEVEL, 0),
            ]
        ),
        static_summary=f"{name}: {parsed.seats}-seat SnG, entry {parsed.entry_fee}",
    )
    if db is not None:
        await _until_listed(db, tournament_id)
    return CreatedTournament(
        tournament_id=tournament_id, workflow_id=workflow_id, state="registering"
    )


class CancelBody(WireModel):
    reason: str = Field(default="cancelled by an operator", max_length=200)


@router.post(
    "/tournaments/{tournament_id}/cancel",
    response_model=TournamentView,
    response_model_by_alias=True,
)
async def cancel_tournament(
    tournament_id: TournamentId, body: CancelBody, temporal: TemporalDep
) -> TournamentView:
    """Cancel while registering: every paid entry is refunded, then the state is cancelled."""
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    return await execute_update(
        handle,
        TournamentWorkflow.cancel,
        CancelInput(reason=body.reason),
        closed_code=ErrorCode.INVALID_STATE,
    )


@router.post(
    "/tournaments/{tournament_id}/payouts/retry",
    response_model=TournamentView,
    response_model_by_alias=True,
)
async def retry_payouts(tournament_id: TournamentId, temporal: TemporalDep) -> TournamentView:
    """Try a settling tournament's refused payouts again now (each intent pays at most once);
    the reconciler does the same on its own schedule (docs/operations.md)."""
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    return await execute_update(
        handle,
        TournamentWorkflow.retry_payouts,
        RetryPayoutsInput(),
        closed_code=ErrorCode.INVALID_STATE,
    )


class CreditBody(WireModel):
    user_id: str = Field(min_length=1, max_length=100)
    amount: int = Field(gt=0, le=10**15, strict=True)
    idempotency_key: str = Field(min_length=1, max_length=150)
    """Sending the same key again credits nothing more."""


class Balance(WireModel):
    user_id: str
    """Who asked (``/me``: the caller, a player's user id or an agent's id) or was credited."""
    balance: int
    account_id: str | None = None
    """The ledger account the balance is: ``user:<userId>``; an agent's is its owner's (an
    agent's entries are paid from there, docs/api.md "Money")."""
    applied: bool | None = None


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
async def force_end_tournament(body: ForceEndBody, temporal: TemporalDep) -> TournamentView:
    """Stop a wedged tournament: live seats ranked by stack, then the normal end (409 unless
    playing and the current level is force_end_min_level_age_seconds old)."""
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(body.table_id)
    )
    # The workflow refuses it while the level is younger than the deployment's minimum
    # (fixed in the tournament at creation), whoever sends it: the API, the Temporal UI or CLI.
    return await execute_update(
        handle,
        TournamentWorkflow.force_end,
        ForceEndInput(reason=body.reason),
        closed_code=ErrorCode.INVALID_STATE,
    )


def current_level_started_at_ms(view: TournamentView) -> int | None:
    """When the view's current level began, from the same level clock the workflow runs."""
    if view.play_start_ms is None:
        return None
    return level_started_at_ms(
        validate_settings(view.settings), view.play_start_ms, view.current_level
    )


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
async def admin_detail(
    tournament_id: TournamentId, temporal: TemporalDep, db: DbDep
) -> AdminTournamentDetail:
    """The workflow's own view plus the payout intents as the money legs recorded them."""
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    view: TournamentView = await handle.query(TournamentWorkflow.state, rpc_timeout=QUERY_TIMEOUT)
    async with db.session() as session:
        intents = await session.exec(
            select(PayoutIntent)
            .where(PayoutIntent.tournament_id == tournament_id)
            .order_by(col(PayoutIntent.position))
        )
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
            for i in intents
        ]
    return AdminTournamentDetail(tournament=view, payout_intents=rows)
