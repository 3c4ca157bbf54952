"""The cash room's side of each hand: who is dealt in, the stream, the settlement, the grace.

TableWorkflow calls these hooks from its hand loop; at a tournament table they do nothing.
The stream is queued as the hand moves and flushed (one local activity per batch) before the
next decision is awaited; the settlement posts the stacks' changes to the ledger and records
the hand; the grace gives a player whose polling lapsed ``disconnectGrace`` before the
timeout rules (workflows/room.py has the room's life and its updates).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.holdem import Hand, public_view
    from domain.rooms import StreamCursor, hand_events, settle
    from wire.messages import EventInput
    from wire.table_messages import (
        RoomHandInput,
        RoomRow,
        RoomSpec,
        SeenQuery,
        TablePublication,
        TableSeat,
        TableSnapshot,
        TableState,
    )
    from workflows import effects

READ_MODEL_PATCH = "read-model-v1"
"""Tables publish their state to the read store (docs/read-model.md) from this patch on."""


class RoomHandMixin:
    st: TableState
    hand: Hand | None
    commitment: str | None

    if TYPE_CHECKING:

        def _bump(self) -> None: ...
        def _seat(self, seat: int) -> TableSeat: ...
        def snapshot(self) -> TableSnapshot: ...

    def init_stream(self) -> None:
        self.stream_queue: list[EventInput] = []
        self.stream_lock = asyncio.Lock()
        self.cursor = StreamCursor()
        # The table version the read store last got from this run (docs/read-model.md); a
        # new run publishes its first version again, which the store takes as a no-op.
        self.published_version = -1

    # -- hooks the hand calls (no-ops at a tournament table) ---------------------------------
    def able_seats(self) -> list[int]:
        """Seats the next room hand deals in: chips, entry settled, not leaving or sitting out."""
        return [
            s.seat
            for s in self.st.seats
            if s.stack > 0 and not s.pending and not s.leaving and not s.sitting_out
        ]

    async def room_hand_started(self, hand: Hand) -> None:
        if self.st.room is None:
            return
        for seat in self.st.seats:
            if seat.sitting_out and seat.seat not in hand.seats:
                seat.sat_out_hands += 1
        self.cursor = StreamCursor()
        self._queue(
            "hand_start",
            {
                "handNumber": self.st.hand_no,
                "button": hand.button,
                "smallBlind": self.st.room.small_blind,
                "bigBlind": self.st.room.big_blind,
                "seats": [
                    {"seat": s, "player": self._seat(s).player_id, "stack": chips}
                    for s, chips in zip(hand.seats, hand.starting_stacks, strict=True)
                ],
                "deckCommitment": self.commitment,
            },
            key=f"h{self.st.hand_no}:start",
        )

    async def room_stream(self, hand: Hand) -> None:
        """Publish what the hand did since the last call (before each decision is awaited)."""
        if self.st.room is None:
            return
        events, self.cursor = hand_events(self.st.hand_no, public_view(hand, None), self.cursor)
        for type_, key, payload in events:
            self._queue(type_, payload, key=key)
        await self._flush()

    async def room_hand_finished(self, hand: Hand, record: dict[str, Any]) -> None:
        room = self.st.room
        if room is None:
            return
        hand_no = self.st.hand_no
        events, self.cursor = hand_events(hand_no, public_view(hand, None), self.cursor)
        for type_, key, payload in events:
            self._queue(type_, payload, key=key)
        settlement = settle(record)
        record["settlement"] = settlement.to_wire()
        players = {s.seat: s.player_id for s in self.st.seats}
        await effects.settle_room_hand(
            RoomHandInput(
                room_id=room.room_id,
                table_id=self.st.table_id,
                hand_no=hand_no,
                record=record,
                deltas={players[seat]: delta for seat, delta in settlement.deltas.items()},
                memo=(
                    f"room {room.room_id} hand {hand_no}: gross pot {settlement.gross_pot},"
                    f" net to winner {sum(settlement.net_to_winner.values())}"
                ),
            )
        )
        if record["shown"]:
            self._queue(
                "showdown",
                {"handNumber": hand_no, "shown": record["shown"]},
                key=f"h{hand_no}:showdown",
            )
        self._queue(
            "hand_result",
            {
                "handNumber": hand_no,
                "board": record["board"],
                "pots": record["pots"],
                "stacksAfter": record["stacks_after"],
                **settlement.to_wire(),
                "deckCommitment": record["deck_commitment"],
                "deckSeed": record["deck_seed"],
            },
            key=f"h{hand_no}:result",
        )
        await self._flush()
        await self._save_room()

    async def room_grace(self, seat: TableSeat) -> int:
        """At a room, a player whose polling lapsed gets ``disconnectGrace`` in all before the
        timeout rules apply (once per run of timeouts): the extra seconds to wait, else 0."""
        room = self.st.room
        if room is None or seat.timeouts > 0:
            return 0
        seen = await effects.seconds_since_seen(
            SeenQuery(room_id=room.room_id, player_id=seat.player_id)
        )
        if seen is not None and seen < room.decision_timeout:
            return 0  # connected, just slow: the timeout rules apply now
        return max(0, room.disconnect_grace - room.decision_timeout)

    # -- the stream and the record ---------------------------------------------------------
    def _queue(self, type_: str, payload: dict[str, Any], *, key: str | None = None) -> None:
        room = self._room()
        if key is None:
            room.stream_seq += 1
            key = f"e{room.stream_seq}"
        self.stream_queue.append(
            EventInput(tournament_id=room.room_id, type=type_, dedupe_key=key, payload=payload)
        )

    async def _flush(self) -> None:
        """Publish what is new: a room's queued stream events and the table's newest version
        (the pushed read model), in one local activity. Only the main loop calls it, before
        it waits, so what it publishes depends on the loop alone (docs/durability.md)."""
        async with self.stream_lock:  # batches reach the log in the order they were queued
            batch, self.stream_queue = self.stream_queue, []
            changed = self.st.version != self.published_version
            if not batch and not changed:
                return
            # Histories from before the read model published events only (and nothing at a
            # tournament table): they replay that way.
            if not workflow.patched(READ_MODEL_PATCH):
                if batch:
                    await effects.publish_room_events(batch)
                return
            self.published_version = self.st.version
            await effects.publish_table(
                TablePublication(events=batch, state=self.snapshot() if changed else None)
            )

    async def _save_room(self, *, closed: bool = False) -> None:
        room = self._room()
        await effects.save_room(
            RoomRow(
                room_id=room.room_id,
                name=room.name,
                seats=self.st.seat_count,
                entry=room.entry,
                small_blind=room.small_blind,
                big_blind=room.big_blind,
                speed=room.speed,
                decision_timeout=room.decision_timeout,
                disconnect_grace=room.disconnect_grace,
                status=room.status,
                hand_number=self.st.hand_no,
                players=self.players(),
                created_ms=room.created_ms,
                closed=closed,
            )
        )

    def players(self) -> list[dict[str, Any]]:
        """The record's ``players``: seat, handle, stack and status."""
        hand = self.hand
        running = hand is not None and not hand.over
        out = []
        for s in self.st.seats:
            if s.pending:
                status = "joining"
            elif s.leaving:
                status = "leaving"
            elif s.sitting_out:
                status = "sitting-out"
            elif running and hand is not None and s.seat not in hand.seats:
                status = "waiting"
            else:
                status = "active"
            out.append({"seat": s.seat, "handle": s.player_id, "stack": s.stack, "status": status})
        return out

    def _room(self) -> RoomSpec:
        assert self.st.room is not None
        return self.st.room
