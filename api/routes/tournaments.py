"""Players' and agents' tournament routes: the lobby, a tournament's state, registration."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlmodel import col, select

from api.auth import CurrentPlayer
from api.deps import DbDep, TournamentId
from api.errors import ApiError
from api.services import tournaments
from api.services.tournaments import TournamentDetail
from api.state import AppStateDep
from db import agents, wallets
from db.models import Tournament
from domain.errors import ErrorCode
from domain.settings import TournamentSettings
from wire.messages import (
    LeaveResult,
    LeaveVia,
    PayEntryInput,
    Permit,
    RegisterInput,
    RegisterResult,
    UnregisterInput,
    WireModel,
)
from workflows.tournament import TournamentWorkflow

router = APIRouter(prefix="/tournaments", tags=["tournaments"])


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


@router.get("/{tournament_id}", response_model=TournamentDetail, response_model_by_alias=True)
async def tournament_state(tournament_id: TournamentId, state: AppStateDep) -> TournamentDetail:
    """Served from a per-replica record shared by every caller, at most one second old (security
    review M4), read from the read model: no workflow query while the tournament registers,
    starts or plays, nor once it is closed or cancelled (N4); between the end of play and the
    close, one query per second per replica at most. A registration, payment or leave
    accepted through this replica refreshes it; a refused one changes nothing."""
    return await tournaments.public_record(state, tournament_id)


@router.post(
    "/{tournament_id}/register", response_model=RegisterResult, response_model_by_alias=True
)
async def register_for_tournament(
    tournament_id: TournamentId,
    body: RegisterBody,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> RegisterResult:
    db = state.db
    # The workflow checks the advisor's owner and skills; it learns them from the registry here.
    advisor = None
    if body.advisor_agent_id is not None:
        # An unknown advisor is not a 404 here: the workflow refuses it with the seed's code
        # (advisor_on_non_copilot_kind on other kinds, advisor_required on copilot).
        advisor = await agents.by_id(db, body.advisor_agent_id)
    return await tournaments.write(
        state,
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
    state: AppStateDep,
) -> RegisterResult:
    if body.permit is not None and not await wallets.is_bound_to(
        state.db, body.permit.owner, caller.owner
    ):
        # Never relay a permit for a wallet the caller has not proven is theirs (security
        # review C1): the vault would spend any standing allowance of the named owner.
        raise ApiError(
            ErrorCode.WALLET_NOT_BOUND,
            f"{body.permit.owner} is not bound to you: bind it first (POST /me/wallets)",
            field="permit.owner",
        )
    return await tournaments.write(
        state,
        tournament_id,
        TournamentWorkflow.pay_entry,
        PayEntryInput(player_id=caller.user_id, amount=body.amount, permit=body.permit),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post("/{tournament_id}/leave", response_model=LeaveResult, response_model_by_alias=True)
async def leave(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> LeaveResult:
    """Leave during registration: an unpaid reserve is dropped, a paid entry refunded."""
    return await tournaments.write(
        state,
        tournament_id,
        TournamentWorkflow.unregister,
        UnregisterInput(player_id=caller.user_id),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post("/{tournament_id}/stand-up", response_model=LeaveResult, response_model_by_alias=True)
async def stand_up(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> LeaveResult:
    """stand_up: like leave while registering; refused once play has begun."""
    return await tournaments.write(
        state,
        tournament_id,
        TournamentWorkflow.unregister,
        UnregisterInput(player_id=caller.user_id, via=LeaveVia.STAND_UP),
        closed_code=ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT,
    )
