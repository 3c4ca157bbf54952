"""Players' and agents' tournament routes: the lobby, a tournament's state, registration."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlmodel import col, select

from api.auth import CurrentPlayer
from api.deps import DbDep, TournamentId
from api.services import tournaments
from api.services.tournaments import TournamentDetail
from api.state import AppStateDep
from db.models import Tournament
from domain.settings import TournamentSettings
from wire.messages import (
    LeaveResult,
    LeaveVia,
    Permit,
    RegisterResult,
    WireModel,
)

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
    return await tournaments.register(state, tournament_id, caller, body.advisor_agent_id)


@router.post("/{tournament_id}/pay", response_model=RegisterResult, response_model_by_alias=True)
async def pay_entry(
    tournament_id: TournamentId,
    body: PayEntryBody,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> RegisterResult:
    return await tournaments.pay(state, tournament_id, caller, body.amount, body.permit)


@router.post("/{tournament_id}/leave", response_model=LeaveResult, response_model_by_alias=True)
async def leave(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> LeaveResult:
    """Leave during registration: an unpaid reserve is dropped, a paid entry refunded."""
    return await tournaments.leave(state, tournament_id, caller.user_id, LeaveVia.LEAVE)


@router.post("/{tournament_id}/stand-up", response_model=LeaveResult, response_model_by_alias=True)
async def stand_up(
    tournament_id: TournamentId,
    caller: CurrentPlayer,
    state: AppStateDep,
) -> LeaveResult:
    """stand_up: like leave while registering; refused once play has begun."""
    return await tournaments.leave(state, tournament_id, caller.user_id, LeaveVia.STAND_UP)
