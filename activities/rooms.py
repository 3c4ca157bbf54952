"""Cash-room side effects: the read model, the money legs, each hand's settlement, presence.

Money: a seated player's stack lives in its own ledger account (``room:<room>:<player>``). The
buy-in moves the entry there from the owner's balance, each hand posts the stacks' changes
between the seats' accounts (gross pot in, net to the winners out, no rake), and the cash-out
sends what is left home. Every leg is keyed by the workflow, so a retry moves nothing twice,
and the seat accounts always hold exactly the table's stacks between hands.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col
from temporalio import activity

from activities.events import append
from activities.money import ledger_move
from core.codec import EncryptionCodec
from db import leaderboard, ledger
from db.engine import Database
from db.models import Hand, Room
from db.readstore import seal_private
from domain.errors import DomainError
from wire.keys import room_hand_key
from wire.messages import EventInput, MoneyReceipt
from wire.refusals import refusal
from wire.table_messages import (
    RoomHandInput,
    RoomMove,
    RoomRow,
    SeenQuery,
    StreamQuery,
    StreamStatus,
)


class RoomActivities:
    def __init__(self, db: Database, codec: EncryptionCodec) -> None:
        self.db = db
        self.codec = codec  # seals each seat's part of a hand record (db/readstore.py)

    @activity.defn
    async def save_room(self, row: RoomRow) -> None:
        now = datetime.now(UTC)
        values = {
            "name": row.name,
            "seats": row.seats,
            "entry": row.entry,
            "small_blind": row.small_blind,
            "big_blind": row.big_blind,
            "speed": row.speed,
            "decision_timeout": row.decision_timeout,
            "disconnect_grace": row.disconnect_grace,
            "status": row.status,
            "kind": row.kind,
            "hand_number": row.hand_number,
            "players": row.players,
            "updated_at": now,
        }
        if row.closed:
            values["closed_at"] = now
        stmt = (
            insert(Room)
            .values(
                id=row.room_id,
                workflow_id=activity.info().workflow_id,
                created_at=datetime.fromtimestamp(row.created_ms / 1000, UTC),
                **values,
            )
            .on_conflict_do_update(index_elements=["id"], set_=values)
        )
        async with self.db.session() as session:
            await session.exec(stmt)
            await session.commit()

    async def _move(self, move: RoomMove, source: str, destination: str, memo: str) -> MoneyReceipt:
        return await ledger_move(self.db, move.key, move.amount, source, destination, memo)

    @activity.defn
    async def room_buy_in(self, move: RoomMove) -> MoneyReceipt:
        return await self._move(
            move,
            ledger.user_account(move.owner_user_id),
            ledger.room_seat_account(move.room_id, move.player_id),
            f"room entry {move.room_id}",
        )

    @activity.defn
    async def room_cash_out(self, move: RoomMove) -> MoneyReceipt:
        return await self._move(
            move,
            ledger.room_seat_account(move.room_id, move.player_id),
            ledger.user_account(move.owner_user_id),
            f"room stack home {move.room_id}",
        )

    @activity.defn
    async def settle_room_hand(self, hand: RoomHandInput) -> None:
        """The hand's ledger posting, then its history row; both keyed, so a retry after
        either step does nothing twice."""
        legs = {
            ledger.room_seat_account(hand.room_id, player): delta
            for player, delta in hand.deltas.items()
            if delta
        }
        if legs:
            try:
                await ledger.post(
                    self.db,
                    key=room_hand_key(hand.room_id, hand.hand_no),
                    legs=legs,
                    memo=hand.memo,
                )
            except DomainError as err:
                raise refusal(err) from None
        async with self.db.session() as session:
            inserted = await session.exec(
                insert(Hand)
                .values(
                    tournament_id=None,
                    table_id=hand.table_id,
                    hand_no=hand.hand_no,
                    level=0,
                    record=seal_private(hand.record, hand.table_id, hand.hand_no, self.codec),
                    created_at=datetime.now(UTC),
                )
                .on_conflict_do_nothing(index_elements=["table_id", "hand_no"])
                .returning(col(Hand.id))
            )
            if inserted.first() is not None:  # the hand's key: a retry counts it once
                await leaderboard.hand_settled(
                    session,
                    hand.record,
                    where={
                        "roomId": hand.room_id,
                        "tableId": hand.table_id,
                        "handNumber": hand.hand_no,
                    },
                    room=True,
                )
            await session.commit()

    @activity.defn
    async def publish_events(self, events: list[EventInput]) -> None:
        """Append a batch to the room's event log in order; a retry's duplicates are skipped."""
        if not events:
            return
        async with self.db.session() as session:
            for event in events:  # one by one: the log's id order is the publication order
                await append(session, event)
            await session.commit()

    @activity.defn
    async def seconds_since_seen(self, query: SeenQuery) -> float | None:
        """How long ago the player last polled or acted at the room (None: never)."""
        async with self.db.engine.connect() as conn:
            value = await conn.scalar(
                text(
                    "SELECT extract(epoch FROM now() - last_seen) FROM room_presence"
                    " WHERE room_id = :room AND viewer = :player"
                ),
                {"room": query.room_id, "player": query.player_id},
            )
        return float(value) if value is not None else None

    @activity.defn
    async def stream_status(self, query: StreamQuery) -> StreamStatus:
        """How long ago the player's stream at the table dropped (None: open, or never
        opened) and, at a room, how long ago they last polled or acted there: the evidence
        the disconnect grace reads (``stream-grace-v1``, docs/rooms.md). Ages by the database's
        clock, which also stamped them."""
        async with self.db.engine.connect() as conn:
            dropped = await conn.scalar(
                text(
                    "SELECT extract(epoch FROM now() - dropped_at) FROM stream_presence"
                    " WHERE table_id = :table AND player_id = :player"
                ),
                {"table": query.table_id, "player": query.player_id},
            )
            seen = None
            if query.room_id is not None:
                seen = await conn.scalar(
                    text(
                        "SELECT extract(epoch FROM now() - last_seen) FROM room_presence"
                        " WHERE room_id = :room AND viewer = :player"
                    ),
                    {"room": query.room_id, "player": query.player_id},
                )
        return StreamStatus(
            dropped_ago=max(0.0, float(dropped)) if dropped is not None else None,
            seen_ago=float(seen) if seen is not None else None,
        )
