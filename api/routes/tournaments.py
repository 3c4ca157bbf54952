"""Players' and agents' tournament routes: the lobby, a tournament's state, registration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlmodel import col, select
from temporalio.client import WorkflowHandle
from temporalio.workflow import UpdateMethodMultiParam

from api.auth import CurrentPlayer
from api.deps import DbDep, TemporalDep, TournamentId, TournamentViewsDep
from api.errors import QUERY_TIMEOUT, ApiError
from api.game_state import WatchedTournament, schedule_of
from api.read_model import WORKFLOW_QUERIES
from api.updates import execute_update
from db import agents, readstore, wallets
from db.models import Tournament
from domain.errors import ErrorCode
from domain.settings import TournamentSettings
from wire.game_state import TournamentSchedule
from wire.ids import tournament_workflow_id
from wire.messages import (
    EntrantStatus,
    LeaveResult,
    LeaveVia,
    PayEntryInput,
    PayoutStatus,
    Permit,
    RegisterInput,
    RegisterResult,
    TournamentPhase,
    TournamentView,
    UnregisterInput,
    WireModel,
)
from workflows.tournament import TournamentWorkflow

router = APIRouter(prefix="/tournaments", tags=["tournaments"])

P = TypeVar("P")
R = TypeVar("R")


class LobbyEntry(WireModel):
    tournament_id: str
    name: str
    kind: str
    seats: int
    entry_fee: int
    registered_count: int
    state: str


class RegisterBody(WireModel):
    """register_for_tournament: deliberately no seat field, seats are server-assigned."""

    advisor_agent_id: str | None = Field(default=None, max_length=100)


class PayEntryBody(WireModel):
    """The entry fee: exactly the tournament's entryFee. On-chain deployments also take the
    ERC-2612 permit the entrant's wallet signed for the vault (its value must be the fee)."""

    amount: int = Field(ge=0, le=10**15, strict=True)
    permit: Permit | None = None


FINAL = (TournamentPhase.CLOSED, TournamentPhase.CANCELLED)
"""A tournament in these states has published its last view, and its workflow has closed."""


def _fetch_view(
    temporal: TemporalDep, db: DbDep, tournament_id: str
) -> Callable[[], Awaitable[TournamentView]]:
    """What the shared view fetches: a closed tournament's last view from the read model
    (security review N4: a query on a closed workflow is a full replay on a worker that runs
    live tables), else the workflow's answer to a query. A tournament that closed before the
    read model existed has no stored view: it is asked as before."""

    async def fetch() -> TournamentView:
        public = await readstore.read_public(db, tournament_workflow_id(tournament_id))
        if public is not None:
            stored = TournamentView.model_validate(public["view"])
            if stored.state in FINAL:
                return stored
        WORKFLOW_QUERIES.labels(workflow="tournament").inc()
        return await _handle(temporal, tournament_id).query(
            TournamentWorkflow.state, rpc_timeout=QUERY_TIMEOUT
        )

    return fetch


async def _write(
    temporal: TemporalDep,
    db: DbDep,
    views: TournamentViewsDep,
    tournament_id: str,
    update: UpdateMethodMultiParam[[Any, P], R],
    arg: P,
    *,
    closed_code: ErrorCode,
) -> R:
    """An Update from a player route. A refused one changes nothing here (security review
    N4: dropping the shared view on every attempt made each read a query again); an accepted
    one refreshes this replica's shared view, so the writer's next read shows the write. On a
    tournament this replica already knows is over, Temporal is not asked at all."""
    known: TournamentView | None = views.peek(tournament_id)
    if known is not None and known.state in FINAL:
        raise ApiError(closed_code, f"the tournament is {known.state.value}")
    result = await execute_update(
        _handle(temporal, tournament_id), update, arg, closed_code=closed_code
    )
    views.refresh(tournament_id, _fetch_view(temporal, db, tournament_id))
    return result


def _handle(
    temporal: TemporalDep, tournament_id: str
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    return temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )


@router.get("", response_model=list[LobbyEntry], response_model_by_alias=True)
async def lobby(db: DbDep) -> list[LobbyEntry]:
    async with db.session() as session:
        rows = await session.exec(
            select(Tournament)
            .where(Tournament.state == "registering")
            .order_by(col(Tournament.created_at).desc())
        )
        return [
            LobbyEntry(
                tournament_id=t.id,
                name=t.name,
                kind=t.kind,
                seats=t.seats,
                entry_fee=t.entry_fee,
                registered_count=t.registered_count,
                state=t.state,
            )
            for t in rows
        ]


SETTINGS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **TournamentSettings.model_json_schema(by_alias=True, mode="validation"),
}
"""What ``settings`` in ``POST /admin/tournaments`` may be, with the wire's camelCase names.
The cross-field rules (blind levels rising, prize percents summing to 100, …) are checked at
creation as well (``invalid_settings``); a schema cannot say them all."""


@router.get(
    "/settings-schema",
    response_model=dict[str, Any],
    summary="The tournament settings' JSON Schema",
    response_description="A JSON Schema (draft 2020-12) of a tournament's `settings`",
)
async def settings_schema() -> JSONResponse:
    """Public and the same for every caller until the service is upgraded: cacheable. It is
    declared before ``/{tournament_id}``, which would otherwise take ``settings-schema`` for
    an id."""
    return JSONResponse(SETTINGS_SCHEMA, headers={"Cache-Control": "public, max-age=3600"})


class PublicEntrant(WireModel):
    """An entrant as anyone may see it: no account, wallet or advisor (security review C1, L3:
    a listed wallet was the key to a free on-chain seat, and linked accounts to wallets)."""

    player_id: str
    is_agent: bool
    status: EntrantStatus
    seat: int | None = None
    reserved_until_ms: int | None = None
    entry_no: int = 1


class PublicPayout(WireModel):
    """A payout as anyone may see it (the destination wallet is not public)."""

    intent_id: str
    position: int
    player_id: str
    amount: int
    status: PayoutStatus
    tx_hash: str | None = None
    failure_reason: str | None = None


class TournamentDetail(TournamentView):
    entrants: list[PublicEntrant]  # type: ignore[assignment]
    payouts: list[PublicPayout] = Field(default_factory=list)  # type: ignore[assignment]
    tournament_schedule: TournamentSchedule
    """The resolved blind preview from the current level (open-ended: ``continues``) and the
    resolved prize structure as ``{position, share}`` for the sealed field (or the seats)."""


@router.get("/{tournament_id}", response_model=TournamentDetail, response_model_by_alias=True)
async def tournament_state(
    temporal: TemporalDep, db: DbDep, views: TournamentViewsDep, tournament_id: TournamentId
) -> TournamentDetail:
    """Served from a per-replica view shared by every caller, at most one second old: however
    often it is asked, a tournament costs one workflow query per second per replica (security
    review M4), and a closed or cancelled one none at all (its last view is in the read
    model, N4). A registration, payment or leave accepted through this replica refreshes it;
    a refused one changes nothing."""
    view: TournamentView = await views.get(tournament_id, _fetch_view(temporal, db, tournament_id))
    schedule = schedule_of(WatchedTournament.of(view))
    return TournamentDetail(**view.model_dump(), tournament_schedule=schedule)


@router.post(
    "/{tournament_id}/register", response_model=RegisterResult, response_model_by_alias=True
)
async def register_for_tournament(
    tournament_id: TournamentId,
    body: RegisterBody,
    caller: CurrentPlayer,
    temporal: TemporalDep,
    db: DbDep,
    views: TournamentViewsDep,
) -> RegisterResult:
    # The workflow checks the advisor's owner and skills; it learns them from the registry here.
    advisor = None
    if body.advisor_agent_id is not None:
        # An unknown advisor is not a 404 here: the workflow refuses it with the seed's code
        # (advisor_on_non_copilot_kind on other kinds, advisor_required on copilot).
        advisor = await agents.by_id(db, body.advisor_agent_id)
    return await _write(
        temporal,
        db,
        views,
        tournament_id,
        TournamentWorkflow.register,
        RegisterInput(
            player_id=caller.user_id,
            owner_user_id=caller.owner,
            is_agent=caller.is_agent,
            advisor_agent_id=body.advisor_agent_id,
            advisor_owner_user_id=advisor.owner_user_id if advisor else None,
            advisor_skills=list(advisor.skills) if advisor else [],
        ),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post("/{tournament_id}/pay", response_model=RegisterResult, response_model_by_alias=True)
async def pay_entry(
    tournament_id: TournamentId,
    body: PayEntryBody,
    caller: CurrentPlayer,
    temporal: TemporalDep,
    db: DbDep,
    views: TournamentViewsDep,
) -> RegisterResult:
    if body.permit is not None and not await wallets.is_bound_to(
        db, body.permit.owner, caller.owner
    ):
        # Never relay a permit for a wallet the caller has not proven is theirs (security
        # review C1): the vault would spend any standing allowance of the named owner.
        raise ApiError(
            ErrorCode.WALLET_NOT_BOUND,
            f"{body.permit.owner} is not bound to you: bind it first (POST /me/wallets)",
            field="permit.owner",
        )
    return await _write(
        temporal,
        db,
        views,
        tournament_id,
        TournamentWorkflow.pay_entry,
        PayEntryInput(player_id=caller.user_id, amount=body.amount, permit=body.permit),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post("/{tournament_id}/leave", response_model=LeaveResult, response_model_by_alias=True)
async def leave(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    temporal: TemporalDep,
    db: DbDep,
    views: TournamentViewsDep,
) -> LeaveResult:
    """Leave during registration: an unpaid reserve is dropped, a paid entry refunded."""
    return await _write(
        temporal,
        db,
        views,
        tournament_id,
        TournamentWorkflow.unregister,
        UnregisterInput(player_id=caller.user_id),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post("/{tournament_id}/stand-up", response_model=LeaveResult, response_model_by_alias=True)
async def stand_up(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    temporal: TemporalDep,
    db: DbDep,
    views: TournamentViewsDep,
) -> LeaveResult:
    """stand_up: like leave while registering; refused once play has begun."""
    return await _write(
        temporal,
        db,
        views,
        tournament_id,
        TournamentWorkflow.unregister,
        UnregisterInput(player_id=caller.user_id, via=LeaveVia.STAND_UP),
        closed_code=ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT,
    )
