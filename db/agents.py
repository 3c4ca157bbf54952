"""The agent registry: create an agent with its API key, resolve a key or an id, revoke.

A key is ``sk_`` followed by 43 URL-safe characters (256 random bits). Only its SHA-256 is
stored: with that much entropy a fast hash is as safe as a slow one and can be looked up by
a unique index, so authenticating an agent costs one indexed read. ``key_prefix`` (the first
11 characters) is kept in clear so operators can tell keys apart without holding them.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import text
from sqlmodel import col, select
from sqlmodel.sql.expression import SelectOfScalar

from db.engine import Database
from db.models import Agent, utcnow
from domain.errors import DomainError, ErrorCode

KEY_PREFIX = "sk_"
AGENT_ID_PREFIX = "agent-"
"""Every agent id starts with it, and no user id may (api/auth.py): one id space each, so a
player token can never name an agent (security review M2)."""
PREFIX_LENGTH = 11


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_agent_key(credential: str) -> bool:
    """Agent keys and JWTs never collide: a JWT starts with the base64 of ``{"``, not ``sk_``."""
    return credential.startswith(KEY_PREFIX)


@dataclass(frozen=True)
class NewAgent:
    agent: Agent
    key: str
    """The only time the key exists in clear: hand it to the agent's owner now."""


async def create_agent(
    db: Database, *, owner_user_id: str, name: str, skills: list[str]
) -> NewAgent:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    agent = Agent(
        agent_id=f"{AGENT_ID_PREFIX}{secrets.token_hex(6)}",
        owner_user_id=owner_user_id,
        name=name,
        skills=sorted(set(skills)),
        key_hash=hash_key(key),
        key_prefix=key[:PREFIX_LENGTH],
    )
    async with db.session() as session:
        session.add(agent)
        await session.commit()
        await session.refresh(agent)
    return NewAgent(agent=agent, key=key)


async def by_key(db: Database, key: str) -> Agent | None:
    """The live agent holding this key, or None (unknown or revoked)."""
    async with db.session() as session:
        rows = await session.exec(
            select(Agent).where(Agent.key_hash == hash_key(key), col(Agent.revoked_at).is_(None))
        )
        return rows.first()


def _live(agent_id: str) -> SelectOfScalar[Agent]:
    return select(Agent).where(Agent.agent_id == agent_id, col(Agent.revoked_at).is_(None))


async def owned_by(db: Database, owner_user_id: str) -> list[Agent]:
    """An owner's live (unrevoked) agents, oldest first."""
    async with db.session() as session:
        query = (
            select(Agent)
            .where(Agent.owner_user_id == owner_user_id, col(Agent.revoked_at).is_(None))
            .order_by(col(Agent.created_at))
        )
        return list(await session.exec(query))


async def by_id(db: Database, agent_id: str) -> Agent | None:
    """The live agent with this id, or None (unknown or revoked)."""
    async with db.session() as session:
        return (await session.exec(_live(agent_id))).first()


async def revoke(db: Database, agent_id: str) -> Agent | None:
    """Revoke an agent's key (idempotent: the first revocation time stands)."""
    async with db.session() as session:
        agent = await session.get(Agent, agent_id)
        if agent is None:
            return None
        if agent.revoked_at is None:
            agent.revoked_at = utcnow()
            session.add(agent)
            await session.commit()
            await session.refresh(agent)
        return agent


async def require_live(db: Database, agent_id: str, *, field: str = "agentId") -> Agent:
    """The live agent with this id, or an ``agent_not_found`` refusal naming the field."""
    agent = await by_id(db, agent_id)
    if agent is None:
        raise DomainError(ErrorCode.AGENT_NOT_FOUND, f"no live agent {agent_id!r}", field=field)
    return agent


IN_A_RUNNING_HAND = text(
    "SELECT 1 FROM read_states WHERE kind IN ('table', 'room') AND private ->> :player IS NOT NULL"
    " AND NOT coalesce((public -> 'view' ->> 'finished')::boolean, false) LIMIT 1"
)
"""Whether a player is dealt into a hand that runs now: a table's published state holds a
private part (its hole cards) for it only then (docs/read-model.md)."""


async def set_card_key(db: Database, agent_id: str, public_key: str | None) -> Agent | None:
    """Put (or, with None, take off) the public key on a live agent's card, and record when.

    Refused (``card_key_locked``) while the agent is dealt into a running hand: the key its
    cards are sealed to changes only between hands (security review N8). The same value
    again changes nothing and is always accepted."""
    async with db.session() as session:
        agent = (await session.exec(_live(agent_id).with_for_update())).first()
        if agent is None:
            return None
        if agent.card_public_key == public_key:
            return agent
        conn = await session.connection()
        if (await conn.execute(IN_A_RUNNING_HAND, {"player": agent_id})).first():
            raise DomainError(
                ErrorCode.CARD_KEY_LOCKED,
                "the Agent Card's key cannot change while the agent plays a hand:"
                " change it between hands",
            )
        agent.card_public_key = public_key
        agent.card_key_changed_at = utcnow()
        session.add(agent)
        await session.commit()
        await session.refresh(agent)
        return agent


async def card_key(db: Database, agent_id: str) -> str | None:
    """The public key on a live agent's card (base64), if it put one there."""
    agent = await by_id(db, agent_id)
    return agent.card_public_key if agent is not None else None


async def card_keys(db: Database, player_ids: Iterable[str]) -> dict[str, str]:
    """The Agent Card keys of those players that are live agents with a key on their card
    (one read, whatever the count): a room record's ``cryptoId``."""
    ids = sorted({p for p in player_ids if p.startswith(AGENT_ID_PREFIX)})
    if not ids:
        return {}
    async with db.session() as session:
        rows = await session.exec(
            select(Agent).where(
                col(Agent.agent_id).in_(ids),
                col(Agent.revoked_at).is_(None),
                col(Agent.card_public_key).is_not(None),
            )
        )
        return {a.agent_id: a.card_public_key for a in rows if a.card_public_key is not None}
