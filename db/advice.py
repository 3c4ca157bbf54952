"""CoPilot advice (docs/copilot.md): who an advisor agent advises, and the advice it gave.

The binding is the tournament's own: the entry's ``advisorAgentId``, checked by the workflow at
registration and kept in ``entrants.advisor_agent_id`` (a released entry binds nothing). A cash
room's is the API's (``room_advisors``): checked and written by the join route once the room
took the join (the room's workflow knows nothing of advisors). The
advice an advisor gives is written here by the API (its socket) and read by the advised player's
stream: it goes through PostgreSQL, never through a workflow or one replica's memory.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select

from db.engine import Database
from db.models import Advice, Entrant, RoomAdvisor, utcnow
from wire.messages import EntrantStatus


async def advised_players(db: Database, tournament_id: str, agent_id: str) -> list[str]:
    """The players of ``tournament_id`` whose live entry names ``agent_id`` as advisor."""
    async with db.session() as session:
        rows = await session.exec(
            select(Entrant.player_id)
            .where(
                Entrant.tournament_id == tournament_id,
                Entrant.advisor_agent_id == agent_id,
                Entrant.status != EntrantStatus.RELEASED.value,
            )
            .order_by(col(Entrant.player_id))
        )
        return list(rows)


async def room_advised_players(db: Database, room_id: str, agent_id: str) -> list[str]:
    """The players of a cash room who named ``agent_id`` as their advisor when they joined."""
    async with db.session() as session:
        rows = await session.exec(
            select(RoomAdvisor.player_id)
            .where(RoomAdvisor.room_id == room_id, RoomAdvisor.advisor_agent_id == agent_id)
            .order_by(col(RoomAdvisor.player_id))
        )
        return list(rows)


async def bind_room_advisor(db: Database, room_id: str, player_id: str, agent_id: str) -> None:
    """Bind (or rebind) a room player's advisor: written once the room took the join."""
    stmt = insert(RoomAdvisor).values(
        room_id=room_id, player_id=player_id, advisor_agent_id=agent_id, bound_at=utcnow()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["room_id", "player_id"],
        set_={
            "advisor_agent_id": stmt.excluded.advisor_agent_id,
            "bound_at": stmt.excluded.bound_at,
        },
    )
    async with db.session() as session:
        await session.exec(stmt)
        await session.commit()


async def record(
    db: Database,
    *,
    scope_id: str,
    table_id: str,
    player_id: str,
    hand_number: int,
    turn: int,
    advisor_agent_id: str,
    action: str,
    amount: int | None,
    reason: str,
) -> bool:
    """Store one turn's advice; False when that turn already has one (the first stands)."""
    stmt = (
        insert(Advice)
        .values(
            scope_id=scope_id,
            table_id=table_id,
            player_id=player_id,
            hand_number=hand_number,
            turn=turn,
            advisor_agent_id=advisor_agent_id,
            action=action,
            amount=amount,
            reason=reason,
        )
        .on_conflict_do_nothing(
            index_elements=["scope_id", "table_id", "player_id", "hand_number", "turn"]
        )
        .returning(col(Advice.id))
    )
    async with db.session() as session:
        inserted = (await session.exec(stmt)).first()
        await session.commit()
    return inserted is not None


async def for_turn(
    db: Database, scope_id: str, table_id: str, player_id: str, hand_number: int, turn: int
) -> dict[str, Any] | None:
    """The advice for that turn of that player at that table, as the player's ``advice``
    event carries it."""
    async with db.session() as session:
        row = (
            await session.exec(
                select(Advice).where(
                    Advice.scope_id == scope_id,
                    Advice.table_id == table_id,
                    Advice.player_id == player_id,
                    Advice.hand_number == hand_number,
                    Advice.turn == turn,
                )
            )
        ).first()
    if row is None:
        return None
    return {
        "hand_number": row.hand_number,
        "turn": row.turn,
        "action": row.action,
        "amount": row.amount,
        "reason": row.reason,
        "advisor_agent_id": row.advisor_agent_id,
    }
