"""Operator routes behind the service key: create tournaments (more arrive with Operators)."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, status
from pydantic import Field

from api.auth import ServiceKey
from api.deps import SettingsDep, TemporalDep, tournament_workflow_id
from domain.settings import validate_settings
from workflows import search_attributes as sa
from workflows.messages import CreateTournamentInput, WireModel
from workflows.tournament import TournamentWorkflow

router = APIRouter(prefix="/admin", tags=["admin"], dependencies=[ServiceKey])


class CreateTournamentBody(WireModel):
    name: str = Field(min_length=1, max_length=200)
    settings: dict[str, Any]


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
    body: CreateTournamentBody, temporal: TemporalDep, settings: SettingsDep
) -> CreatedTournament:
    # Refuse bad settings here with the field named, before any workflow exists.
    parsed = validate_settings(body.settings)
    tournament_id = secrets.token_hex(5)
    workflow_id = tournament_workflow_id(tournament_id)
    from temporalio.common import SearchAttributePair, TypedSearchAttributes

    await temporal.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tournament_id, name=body.name, settings=body.settings),
        id=workflow_id,
        task_queue=settings.temporal_task_queue,
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(sa.TOURNAMENT_STATE, "registering"),
                SearchAttributePair(sa.TABLE_KIND, str(parsed.kind)),
                SearchAttributePair(sa.SEATS, parsed.seats),
                SearchAttributePair(sa.ENTRY_FEE, parsed.entry_fee),
                SearchAttributePair(sa.CURRENT_LEVEL, 0),
            ]
        ),
        static_summary=f"{body.name}: {parsed.seats}-seat SnG, entry {parsed.entry_fee}",
    )
    return CreatedTournament(
        tournament_id=tournament_id, workflow_id=workflow_id, state="registering"
    )
