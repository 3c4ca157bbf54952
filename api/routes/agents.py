"""Operator routes for the agent registry: create an agent (its key shown once), inspect, revoke."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, status
from pydantic import Field, StringConstraints, field_validator
from sqlmodel import col, select

from api.auth import USER_ID_PATTERN, ServiceKey, valid_user_id
from api.deps import NAME_PATTERN, DbDep
from api.errors import ApiError
from db import agents
from db.models import Agent
from domain.errors import ErrorCode
from wire.messages import WireModel

router = APIRouter(prefix="/admin/agents", tags=["admin", "agents"], dependencies=[ServiceKey])

Skill = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=r"^[a-z0-9:_.-]+$")]


class CreateAgentBody(WireModel):
    owner_user_id: str = Field(min_length=1, max_length=100, pattern=USER_ID_PATTERN)

    @field_validator("owner_user_id")
    @classmethod
    def _a_user_not_an_agent(cls, value: str) -> str:
        if valid_user_id(value) is None:
            raise ValueError("an agent's owner is a user id, not an agent's (agent-...)")
        return value

    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    skills: list[Skill] = Field(default_factory=lambda: ["poker:sng"], max_length=20)


class AgentView(WireModel):
    agent_id: str
    owner_user_id: str
    name: str
    skills: list[str]
    key_prefix: str
    created_at: datetime
    revoked_at: datetime | None = None

    @classmethod
    def of(cls, agent: Agent) -> AgentView:
        return cls(
            agent_id=agent.agent_id,
            owner_user_id=agent.owner_user_id,
            name=agent.name,
            skills=list(agent.skills),
            key_prefix=agent.key_prefix,
            created_at=agent.created_at,
            revoked_at=agent.revoked_at,
        )


class CreatedAgent(AgentView):
    key: str
    """Shown this once: only its hash is stored. Send it as X-Agent-Key (or Bearer)."""


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=CreatedAgent,
    response_model_by_alias=True,
)
async def create_agent(body: CreateAgentBody, db: DbDep) -> CreatedAgent:
    new = await agents.create_agent(
        db, owner_user_id=body.owner_user_id, name=body.name, skills=list(body.skills)
    )
    return CreatedAgent(**AgentView.of(new.agent).model_dump(), key=new.key)


@router.get("", response_model=list[AgentView], response_model_by_alias=True)
async def list_agents(
    db: DbDep, owner_user_id: Annotated[str | None, Query(alias="ownerUserId")] = None
) -> list[AgentView]:
    async with db.session() as session:
        query = select(Agent).order_by(col(Agent.created_at))
        if owner_user_id is not None:
            query = query.where(Agent.owner_user_id == owner_user_id)
        return [AgentView.of(a) for a in await session.exec(query)]


@router.get("/{agent_id}", response_model=AgentView, response_model_by_alias=True)
async def get_agent(agent_id: str, db: DbDep) -> AgentView:
    async with db.session() as session:
        agent = await session.get(Agent, agent_id)
    if agent is None:
        raise ApiError(ErrorCode.AGENT_NOT_FOUND, f"no agent {agent_id!r}")
    return AgentView.of(agent)


@router.post("/{agent_id}/revoke", response_model=AgentView, response_model_by_alias=True)
async def revoke_agent(agent_id: str, db: DbDep) -> AgentView:
    """Revoke the agent's key at once (idempotent); the agent row stays for the record."""
    agent = await agents.revoke(db, agent_id)
    if agent is None:
        raise ApiError(ErrorCode.AGENT_NOT_FOUND, f"no agent {agent_id!r}")
    return AgentView.of(agent)
