"""Players' and agents' tournament routes: the lobby, a tournament's state, registration."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field
from sqlmodel import col, select

from api.auth import CurrentPlayer
from api.deps import DbDep, TemporalDep, tournament_workflow_id
from db.models import Tournament
from workflows.messages import RegisterInput, RegisterResult, TournamentView, WireModel
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


@router.get("/{tournament_id}", response_model=TournamentView, response_model_by_alias=True)
async def tournament_state(tournament_id: str, temporal: TemporalDep) -> TournamentView:
    handle = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    return await handle.query(TournamentWorkflow.state)


@router.post(
    "/{tournament_id}/register", response_model=RegisterResult, response_model_by_alias=True
)
async def register_for_tournament(
    tournament_id: str, body: RegisterBody, caller: CurrentPlayer, temporal: TemporalDep
) -> RegisterResult:
    handle = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    return await handle.execute_update(
        TournamentWorkflow.register,
        RegisterInput(
            player_id=caller.user_id,
            owner_user_id=caller.user_id,
            is_agent=caller.is_agent,
            advisor_agent_id=body.advisor_agent_id,
        ),
    )
