"""Service-key routes other services call: the hosted agents' connectionless registration.

Reserves are keyed by the agent's owner (the seed's rule, same as the player path), so the
owner pays the entry and the same owner cannot hold two seats through two agents. Rooms (cash
tables) do not exist here: a ``tableId`` is a tournament id, an unknown one is
``table_not_found``, and an id that names some other workflow (a tournament's child table,
say) is ``not_a_tournament``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from api.auth import InternalKey
from api.deps import DbDep, TemporalDep
from api.errors import ApiError
from api.openapi import ERRORS
from api.updates import execute_update
from db import agents
from db.models import Room, Tournament
from domain.errors import ErrorCode
from wire.ids import tournament_workflow_id
from wire.messages import (
    LeaveResult,
    LeaveVia,
    RegisterInput,
    RegisterResult,
    UnregisterInput,
    WireModel,
)
from workflows.tournament import TournamentWorkflow

router = APIRouter(prefix="/internal", tags=["internal"], dependencies=[InternalKey])

ID_PATTERN = r"^[A-Za-z0-9_.:-]+$"


class AgentTableBody(WireModel):
    table_id: str = Field(min_length=1, max_length=100, pattern=ID_PATTERN)
    agent_id: str = Field(min_length=1, max_length=100, pattern=ID_PATTERN)


async def _exists(handle: WorkflowHandle[Any, Any]) -> str | None:
    """The workflow type behind a handle, or None when there is no such workflow."""
    try:
        return (await handle.describe()).workflow_type
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


async def tournament_handle(
    db: DbDep, temporal: TemporalDep, table_id: str
) -> WorkflowHandle[Any, Any]:
    """The tournament a tableId names, or table_not_found / not_a_tournament."""
    handle = temporal.get_workflow_handle(tournament_workflow_id(table_id))
    async with db.session() as session:
        known = await session.get(Tournament, table_id) is not None
        if not known and await session.get(Room, table_id) is not None:
            raise ApiError(
                ErrorCode.NOT_A_TOURNAMENT, f"{table_id!r} is a cash room", field="tableId"
            )
    # The read model is written by an activity just after the workflow starts: ask Temporal too.
    if known or await _exists(handle) is not None:
        return handle
    kind = await _exists(temporal.get_workflow_handle(table_id))
    if kind is None:
        raise ApiError(ErrorCode.TABLE_NOT_FOUND, f"no table {table_id!r}", field="tableId")
    if kind != TournamentWorkflow.__name__:
        raise ApiError(
            ErrorCode.NOT_A_TOURNAMENT, f"{table_id!r} is not a tournament", field="tableId"
        )
    return temporal.get_workflow_handle(table_id)


# The body names the table and the agent: 404 for either unknown, 400 (not_a_tournament) for
# a cash room's id or another workflow's.
BODY_IDS = {ERRORS: [400, 401, 404, 409, 413, 422]}


@router.post(
    "/tournament-register",
    response_model=RegisterResult,
    response_model_by_alias=True,
    openapi_extra=BODY_IDS,
)
async def tournament_register(
    body: AgentTableBody, db: DbDep, temporal: TemporalDep
) -> RegisterResult:
    """Reserve a seat for a hosted agent: seated as itself (it acts and pays with its own key),
    one entry per owner (security review M2); the reserve lapses after 120 s."""
    handle = await tournament_handle(db, temporal, body.table_id)
    agent = await agents.require_live(db, body.agent_id)
    return await execute_update(
        handle,
        TournamentWorkflow.register,
        RegisterInput(player_id=agent.agent_id, owner_user_id=agent.owner_user_id, is_agent=True),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


@router.post(
    "/tournament-unregister",
    response_model=LeaveResult,
    response_model_by_alias=True,
    openapi_extra=BODY_IDS,
)
async def tournament_unregister(
    body: AgentTableBody, db: DbDep, temporal: TemporalDep
) -> LeaveResult:
    """Drop an unpaid reserve; a paid entry is refused (paid_registration_use_refund_path)."""
    handle = await tournament_handle(db, temporal, body.table_id)
    agent = await agents.require_live(db, body.agent_id)
    return await execute_update(
        handle,
        TournamentWorkflow.unregister,
        UnregisterInput(player_id=agent.agent_id, via=LeaveVia.INTERNAL),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )
