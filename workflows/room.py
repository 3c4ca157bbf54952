"""RoomWorkflow: a cash room, a table with no tournament, fixed stakes and a fixed entry.

A room (``room-<id>``) runs until it closes: ``waiting`` for two players, ``playing`` hands back
to back, ``paused`` when fewer than two can play after a hand, ``closed`` by an admin or after
30 minutes with no hands and nobody seated. Joining reserves the entry from the player's
balance (it becomes the stack); a player who joins mid-hand is dealt in from the next hand.
Leaving returns the stack, at once between hands or at the end of the hand the player is in.
Every Update waits for the room's loop to serve it (workflows/inbox.py), where the loop waits
anyway: at a decision, in the pause between hands, or while it waits for players. So a room's
money moves happen one at a time, in the loop, and need no lock.
Each hand's result is posted to the ledger (gross pot, net to winner, no rake) and recorded,
and every action, street, pot change and result goes to the room's event stream (queued as the
hand moves and published with the table's state before each decision is awaited).

The hands themselves are the shared hand loop's (workflows/hand_loop.py); this class is its
venue. Timeouts escalate as in the seed: a first timeout checks or folds, a second in a row
also sits the player out, and sitting out three hands in a row removes them with their stack.
A player whose stream (WebSocket or SSE) dropped gets until the drop plus ``disconnectGrace``
before that, and one whose polling lapsed ``disconnectGrace`` instead of ``decision``.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.blinds import Blinds
    from domain.errors import DomainError, ErrorCode
    from domain.holdem import Hand, public_view
    from domain.holdem.timeouts import disconnect_grace_left
    from domain.registration import verify_seat_allowed
    from domain.rooms import (
        CURRENCY,
        IDLE_CLOSE_SECONDS,
        LEAVE_STREAK_RESET_SECONDS,
        SAT_OUT_HANDS_LIMIT,
        RoomStatus,
        StreamCursor,
        hand_events,
        leave_streak,
        rejoin_wait_ms,
        settle,
        status_for,
    )
    from wire.events import (
        ROOM_EVENTS_BY_TYPE,
        Event,
        HandStart,
        PlayerJoin,
        PlayerLeave,
        RoomHandResult,
        RoomStatusChanged,
        SeatStack,
        Showdown,
    )
    from wire.keys import room_join_key, room_leave_key
    from wire.messages import EventInput
    from wire.refusals import coded, passed_on
    from wire.table_messages import (
        CloseRoomInput,
        CloseRoomResult,
        JoinInput,
        JoinResult,
        LeaveInput,
        RoomDeparture,
        RoomHandInput,
        RoomLeaveResult,
        RoomMove,
        RoomRow,
        RoomState,
        SeenQuery,
        StreamQuery,
        TableResult,
        TableSeat,
    )
    from workflows import effects
    from workflows.alarm import Alarm
    from workflows.budget import BUDGET_RETRY_SECONDS
    from workflows.errors import checked
    from workflows.hand_loop import HANDS_PER_RUN, HandLoop, PlayerHandlers

__all__ = ["HANDS_PER_RUN", "RoomWorkflow"]


@workflow.defn
class RoomWorkflow(PlayerHandlers):
    """A cash room: the hand loop, with the room as its venue."""

    @workflow.init
    def __init__(self, state: RoomState) -> None:
        self.state = state
        self.loop = HandLoop(state, self, Blinds(state.room.small_blind, state.room.big_blind, 0))
        self.cursor = StreamCursor()
        # Who the close sent home, with what (a leave that was waiting gets that answer).
        self.closed_out: dict[str, int] = {}

    # -- the room's life ---------------------------------------------------------------------
    @workflow.run
    async def run(self, state: RoomState) -> TableResult:
        room = self.state.room
        played_this_run = 0
        # The run's patches, asked once at its start (``HandLoop.begin_run``).
        self.loop.begin_run(tournament=False)
        await self._save_room()
        while not room.close_requested:
            if played_this_run >= HANDS_PER_RUN or self.loop.run_budget_spent(room.updates_per_run):
                await self.loop.flush()
                await self.loop.serve_until_handlers_finished()
                workflow.continue_as_new(self.state)
            status = status_for(
                able=len(self.dealt_seats()), hands_played=self.state.hand_no, closed=False
            )
            await self._set_status(status)
            if status is not RoomStatus.PLAYING:
                if not await self._wait_for_players():
                    break
                continue
            await self.loop.play_hand()
            played_this_run += 1
            await self._after_hand()
            if room.close_requested:
                break
            if self.state.hand_pause_ms:
                await self.loop.pause_between_hands()
        return await self._close()

    async def _wait_for_players(self) -> bool:
        """Serve requests (a join, a sit-in, a close) until one came; False when the idle
        clock ran out.

        The idle clock is an alarm armed when the room became empty: only its firing closes
        the room (never a comparison with ``workflow.now()``). A join found with the firing
        is served first (workflows/inbox.py), so it keeps the room open.
        """
        room = self.state.room
        alarm = None
        if not self.state.seats:
            alarm = await Alarm.until(room.idle_since_ms + IDLE_CLOSE_SECONDS * 1000, "idle close")
        try:
            await self.loop.flush()
            await self.loop.wait_or_serve(
                lambda: room.close_requested or (alarm is not None and alarm.fired)
            )
        finally:
            if alarm is not None:
                alarm.cancel()
        if alarm is not None and alarm.fired and not self.state.seats and not room.close_requested:
            room.close_requested, room.close_reason = True, "idle"
            return False
        return True

    async def _after_hand(self) -> None:
        """Players who asked to leave, went broke or sat out three hands go, with their stacks."""
        for seat in list(self.state.seats):
            if seat.pending:
                continue
            if seat.leaving:
                await self._remove(seat, "left")
            elif seat.stack == 0:
                await self._remove(seat, "busted")
            elif seat.sitting_out and seat.sat_out_hands >= SAT_OUT_HANDS_LIMIT:
                await self._remove(seat, "sat_out")

    async def _close(self) -> TableResult:
        room = self.state.room
        returned: dict[int, int] = {}
        for seat in list(self.state.seats):
            returned[seat.seat] = await self._remove(seat, "room_closed")
            self.closed_out[seat.player_id] = seat.stack
        room.status = RoomStatus.CLOSED.value
        self.loop.finish()
        self._queue(RoomStatusChanged(status=room.status, reason=room.close_reason))
        await self.loop.flush()
        await self._save_room(closed=True)
        await self.loop.serve_until_handlers_finished()
        return TableResult(
            table_id=self.state.table_id,
            hands_played=self.state.hand_no,
            stacks=returned,
            auto_folds=self.state.auto_folds,
        )

    async def _set_status(self, status: RoomStatus) -> None:
        room = self.state.room
        if room.status == status.value:
            return
        room.status = status.value
        self.loop.changed()
        self._queue(RoomStatusChanged(status=room.status))
        await self.loop.flush()
        await self._save_room()

    # -- updates (each waits for the loop to serve it: workflows/inbox.py) ---------------------
    @workflow.update
    async def join(self, inp: JoinInput) -> JoinResult:
        result: JoinResult = await self.loop.ask(inp)
        return result

    @join.validator
    def _validate_join(self, inp: JoinInput) -> None:
        current = next((s for s in self.state.seats if s.player_id == inp.player_id), None)
        if current is not None:
            if current.pending:
                # A retry while the entry is reserved: the loop answers with the seat. It is
                # an accepted Update all the same, so the run's budget applies (N2).
                checked(lambda _: self._verify_budget(), inp)
                return
            # Refused here, so a repeated join costs no history and none of the run's Update
            # budget (security review H3); the API answers it as the seat already held.
            raise coded(
                ErrorCode.ALREADY_SEATED.value,
                "you are already seated",
                {"seat": current.seat, "stack": current.stack},
            )
        checked(self._verify_join, inp)
        checked(self._verify_join_now, inp)

    @workflow.update
    async def leave(self, inp: LeaveInput) -> RoomLeaveResult:
        result: RoomLeaveResult = await self.loop.ask(inp)
        return result

    @leave.validator
    def _validate_leave(self, inp: LeaveInput) -> None:
        if inp.player_id in self.closed_out:
            return  # the close sent their stack home: the loop answers with it
        checked(self._verify_leave, inp)
        checked(self._verify_leave_now, inp)

    @workflow.update
    async def close(self, inp: CloseRoomInput) -> CloseRoomResult:
        result: CloseRoomResult = await self.loop.ask(inp)
        return result

    @close.validator
    def _validate_close(self, inp: CloseRoomInput) -> None:
        """No rule of its own, but it must exist: the SDK runs the validator interceptor, and
        so the handler binding (core/handler_binding.py, security review N1), only for an
        Update that has a validator (tests/security/test_n1_*: every Update has one)."""

    async def serve_request(self, request: object) -> object:
        """The loop's side of a room's Updates (called only where the loop waits anyway)."""
        if isinstance(request, JoinInput):
            return await self._take_join(request)
        if isinstance(request, LeaveInput):
            return await self._take_leave(request)
        if isinstance(request, CloseRoomInput):
            return self._take_close(request)
        raise AssertionError(f"no such request: {request!r}")

    async def _take_join(self, inp: JoinInput) -> JoinResult:
        room = self.state.room
        current = next((s for s in self.state.seats if s.player_id == inp.player_id), None)
        if current is not None:  # a retried join: the same seat, nothing reserved again
            return JoinResult(seat=current.seat, stack=current.stack, already_seated=True)
        checked(self._verify_join, inp)
        room.joins += 1
        seat = TableSeat(
            seat=self._free_seat(inp.seat),
            player_id=inp.player_id,
            owner_user_id=inp.owner_user_id,
            stack=0,
            session=room.joins,
            pending=True,
        )
        self.state.seats = sorted([*self.state.seats, seat], key=lambda s: s.seat)
        self.loop.changed()
        move = RoomMove(
            key=room_join_key(room.room_id, inp.player_id, seat.session),
            room_id=room.room_id,
            player_id=inp.player_id,
            owner_user_id=inp.owner_user_id,
            amount=room.entry,
        )
        try:
            await effects.room_buy_in(move)
        except ActivityError as err:
            self.state.seats = [s for s in self.state.seats if s is not seat]
            if not self.state.seats:
                room.idle_since_ms = self.loop.now_ms()
            self.loop.changed()
            if isinstance(err.cause, ApplicationError) and err.cause.type:
                raise passed_on(err.cause) from None
            raise
        seat.stack, seat.pending = room.entry, False
        self.loop.changed()
        self._queue(PlayerJoin(seat=seat.seat, player=seat.player_id, stack=seat.stack))
        await self.loop.flush()
        await self._save_room()
        return JoinResult(seat=seat.seat, stack=seat.stack)

    def _verify_join(self, inp: JoinInput) -> None:
        room = self.state.room
        if room.close_requested or self.loop.finished:
            raise DomainError(ErrorCode.ROOM_CLOSED, "the room is closed")
        if inp.seat is not None:
            if not 0 <= inp.seat < self.state.seat_count:
                raise DomainError(
                    ErrorCode.VALIDATION_ERROR,
                    f"seat must be 1–{self.state.seat_count}",
                    field="seat",
                )
            if any(s.seat == inp.seat for s in self.state.seats):
                raise DomainError(
                    ErrorCode.SEAT_TAKEN, f"seat {inp.seat + 1} is taken", field="seat"
                )
        if len(self.state.seats) >= self.state.seat_count:
            raise DomainError(ErrorCode.ROOM_FULL, "every seat is taken")
        holder = next(
            (
                s
                for s in self.state.seats
                if (s.owner_user_id or s.player_id) == inp.owner_user_id
                and s.player_id != inp.player_id
            ),
            None,
        )
        if holder is not None:
            # One seat per owner, whichever identity sits in it (security review M2).
            raise DomainError(
                ErrorCode.OWNER_ALREADY_SEATED,
                f"your account already sits at seat {holder.seat + 1} (as {holder.player_id})",
            )

    def _verify_join_now(self, inp: JoinInput) -> None:
        """The join validator's own checks: the room's audience (the tournaments' gate,
        ``verify_seat_allowed``), the owner's come-back cooldown, then the run's budget
        (security review N2). Validators never replay, so these read the clock and the run's
        count freely, and a room started before audiences (``open``) seats everyone as it did;
        the loop's re-check (``_verify_join``) is unchanged."""
        room = self.state.room
        verify_seat_allowed(room.kind, is_agent=inp.is_agent)
        departure = room.departures.get(inp.owner_user_id)
        if departure is not None:
            wait_ms = rejoin_wait_ms(
                departure.left_ms,
                departure.streak,
                room.rejoin_cooldown_seconds,
                self.loop.now_ms(),
            )
            if wait_ms > 0:
                seconds = -(-wait_ms // 1000)
                raise DomainError(
                    ErrorCode.ROOM_JOIN_COOLDOWN,
                    f"you left this room just now: join again in {seconds} s",
                    retry_after_seconds=seconds,
                )
        self._verify_budget()

    def _verify_budget(self) -> None:
        """Joins and leaves stop once the run accepted its budget, mid-hand too: the rest of
        Temporal's 2,000 is the running hand's (docs/rooms.md, "The run's Update budget")."""
        if self.loop.updates_this_run >= self.state.room.updates_per_run:
            raise DomainError(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the room moves to a fresh run when this hand ends; send this again then",
                retry_after_seconds=BUDGET_RETRY_SECONDS,
            )

    def _free_seat(self, wanted: int | None) -> int:
        if wanted is not None:
            return wanted
        taken = {s.seat for s in self.state.seats}
        return next(n for n in range(self.state.seat_count) if n not in taken)

    async def _take_leave(self, inp: LeaveInput) -> RoomLeaveResult:
        if inp.player_id in self.closed_out and not any(
            s.player_id == inp.player_id for s in self.state.seats
        ):
            return RoomLeaveResult(returned=self.closed_out[inp.player_id])
        checked(self._verify_leave, inp)
        seat = self.loop.seat(self.loop.seat_of(inp.player_id))
        hand = self.loop.hand
        if hand is not None and not hand.over and seat.seat in hand.seats:
            # Mid-hand: they check or fold from now on and go when the hand ends.
            if not seat.leaving:
                seat.leaving = True
                self.loop.changed()
                await self._save_room()  # the record shows "leaving" until the hand ends
            return RoomLeaveResult(returned=None, pending=True)
        returned = await self._remove(seat, "left")
        return RoomLeaveResult(returned=returned)

    def _verify_leave(self, inp: LeaveInput) -> None:
        seat = self.loop.seat(self.loop.seat_of(inp.player_id))
        if seat.pending:
            raise DomainError(ErrorCode.INVALID_STATE, "your entry is still being reserved")
        if seat.leaving:  # a no-op: refused before history (security review H3)
            raise DomainError(ErrorCode.LEAVE_PENDING, "you leave when this hand ends")

    def _verify_leave_now(self, inp: LeaveInput) -> None:
        """The leave validator's own check: the run's budget, except for a seat dealt in the
        running hand (it leaves once per hand, then ``leave_pending``: the hand's head-room
        counts it)."""
        seat = self.loop.seat_of(inp.player_id)
        hand = self.loop.hand
        if hand is not None and not hand.over and seat in hand.seats:
            return
        self._verify_budget()

    def _take_close(self, inp: CloseRoomInput) -> CloseRoomResult:
        room = self.state.room
        if self.loop.finished:
            return CloseRoomResult(status=RoomStatus.CLOSED.value)
        if not room.close_requested:
            room.close_requested, room.close_reason = True, inp.reason
            self.loop.changed()
        return CloseRoomResult(status="closing")

    # -- internals -----------------------------------------------------------------------------
    async def _remove(self, seat: TableSeat, reason: str) -> int:
        """Unseat a player and send the stack home (keyed by the sitting, so exactly once)."""
        room = self.state.room
        if not any(s is seat for s in self.state.seats):
            return seat.stack  # a concurrent leave got there first
        self.state.seats = [s for s in self.state.seats if s is not seat]
        if not self.state.seats:
            room.idle_since_ms = self.loop.now_ms()
        if reason == "left":
            self._note_departure(seat.owner_user_id or seat.player_id)
        self.loop.changed()
        if seat.stack:
            await effects.room_cash_out(
                RoomMove(
                    key=room_leave_key(room.room_id, seat.player_id, seat.session),
                    room_id=room.room_id,
                    player_id=seat.player_id,
                    owner_user_id=seat.owner_user_id or seat.player_id,
                    amount=seat.stack,
                )
            )
        self._queue(
            PlayerLeave(
                seat=seat.seat,
                player=seat.player_id,
                returned=seat.stack,
                currency=CURRENCY,
                reason=reason,
            )
        )
        await self.loop.flush()
        await self._save_room()
        return seat.stack

    def _note_departure(self, owner: str) -> None:
        """Remember an owner's leave for the join cooldown (state only: no command, so no
        patch). Leaves older than the streak's reset are forgotten."""
        room = self.state.room
        now_ms = self.loop.now_ms()
        previous = room.departures.get(owner)
        streak = leave_streak(
            previous.left_ms if previous else None, previous.streak if previous else 0, now_ms
        )
        room.departures = {
            who: d
            for who, d in room.departures.items()
            if now_ms - d.left_ms < LEAVE_STREAK_RESET_SECONDS * 1000
        }
        room.departures[owner] = RoomDeparture(left_ms=now_ms, streak=streak)

    # -- the venue (workflows/hand_loop.py asks these) -------------------------------------
    def blinds_at(self, drawn_at_ms: int) -> tuple[int, Blinds]:
        room = self.state.room
        return 0, Blinds(room.small_blind, room.big_blind, 0)

    def decision_seconds(self) -> int:
        return self.state.room.decision_timeout

    def details(self) -> str:
        return f"room {self.state.room.status}, {len(self.state.seats)} seated"

    def stop_requested(self) -> bool:
        return False  # a room is closed, never stopped

    def dealt_seats(self) -> list[int]:
        """Seats the next hand deals in: chips, entry settled, not leaving or sitting out."""
        return [
            s.seat
            for s in self.state.seats
            if s.stack > 0 and not s.pending and not s.leaving and not s.sitting_out
        ]

    async def hand_started(self, hand: Hand) -> None:
        for seat in self.state.seats:
            if seat.sitting_out and seat.seat not in hand.seats:
                seat.sat_out_hands += 1
        self.cursor = StreamCursor()
        self._queue(
            HandStart(
                hand_number=self.state.hand_no,
                button=hand.button,
                small_blind=self.state.room.small_blind,
                big_blind=self.state.room.big_blind,
                seats=[
                    SeatStack(seat=s, player=self.loop.seat(s).player_id, stack=chips)
                    for s, chips in zip(hand.seats, hand.starting_stacks, strict=True)
                ],
                deck_commitment=self.loop.commitment,
            ),
            key=f"h{self.state.hand_no}:start",
        )

    async def before_decision(self, hand: Hand) -> None:
        """Publish what the hand did since the last call (before each decision is awaited)."""
        events, self.cursor = hand_events(self.state.hand_no, public_view(hand, None), self.cursor)
        for type_, key, payload in events:
            self._queue(ROOM_EVENTS_BY_TYPE[type_].model_validate(payload), key=key)
        await self.loop.flush()

    async def hand_finished(self, hand: Hand, record: dict[str, Any]) -> None:
        room = self.state.room
        hand_no = self.state.hand_no
        events, self.cursor = hand_events(hand_no, public_view(hand, None), self.cursor)
        for type_, key, payload in events:
            self._queue(ROOM_EVENTS_BY_TYPE[type_].model_validate(payload), key=key)
        settlement = settle(record)
        record["settlement"] = settlement.to_wire()
        players = {s.seat: s.player_id for s in self.state.seats}
        await effects.settle_room_hand(
            RoomHandInput(
                room_id=room.room_id,
                table_id=self.state.table_id,
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
                Showdown(hand_number=hand_no, shown=record["shown"]), key=f"h{hand_no}:showdown"
            )
        self._queue(
            RoomHandResult(
                hand_number=hand_no,
                board=record["board"],
                pots=record["pots"],
                stacks_after=record["stacks_after"],
                gross_pot=settlement.gross_pot,
                net_to_winner={str(seat): c for seat, c in settlement.net_to_winner.items()},
                rake=0,
                deck_commitment=record["deck_commitment"],
                **(
                    {"deck": record["deck"]}
                    if "deck" in record
                    else {"deck_seed": record["deck_seed"]}
                ),
            ),
            key=f"h{hand_no}:result",
        )
        await self.loop.flush()
        await self._save_room()

    async def grace(self, seat: TableSeat) -> float:
        """The extra seconds a seat whose decision timer ran out still gets, else 0.

        From ``GRACE_PATCH`` on: a player whose stream dropped gets until the drop plus
        ``disconnectGrace`` (``disconnect_grace_left``); a player with no stream record keeps
        the polling rule below. Before it only the polling rule: a player whose polling lapsed
        gets ``disconnectGrace`` in all (once per run of timeouts)."""
        room = self.state.room
        if self.loop.stream_grace:
            status = await effects.stream_status(
                StreamQuery(
                    table_id=self.state.table_id, room_id=room.room_id, player_id=seat.player_id
                )
            )
            if status.dropped_ago is not None:
                left = disconnect_grace_left(room.disconnect_grace, status.dropped_ago)
                if left > 0:
                    seat.disconnected_at = self.loop.now_ms() - int(status.dropped_ago * 1000)
                return left
            if seat.timeouts > 0 or (
                status.seen_ago is not None and status.seen_ago < room.decision_timeout
            ):
                return 0
            return max(0, room.disconnect_grace - room.decision_timeout)
        if seat.timeouts > 0:
            return 0
        seen = await effects.seconds_since_seen(
            SeenQuery(room_id=room.room_id, player_id=seat.player_id)
        )
        if seen is not None and seen < room.decision_timeout:
            return 0  # connected, just slow: the timeout rules apply now
        return max(0, room.disconnect_grace - room.decision_timeout)

    # -- the stream and the record ---------------------------------------------------------
    def _queue(self, event: Event, *, key: str | None = None) -> None:
        """Queue one event (``wire/events.py``) for the room's stream; it goes out with the
        table's next publication."""
        room = self.state.room
        if key is None:
            room.stream_seq += 1
            key = f"e{room.stream_seq}"
        self.loop.queue(
            EventInput(
                tournament_id=room.room_id,
                type=event.TYPE,
                dedupe_key=key,
                payload=event.payload(),
            )
        )

    async def _save_room(self, *, closed: bool = False) -> None:
        room = self.state.room
        await effects.save_room(
            RoomRow(
                room_id=room.room_id,
                name=room.name,
                seats=self.state.seat_count,
                entry=room.entry,
                small_blind=room.small_blind,
                big_blind=room.big_blind,
                speed=room.speed,
                decision_timeout=room.decision_timeout,
                disconnect_grace=room.disconnect_grace,
                status=room.status,
                kind=room.kind,
                hand_number=self.state.hand_no,
                players=self.players(),
                created_ms=room.created_ms,
                closed=closed,
            )
        )

    def players(self) -> list[dict[str, Any]]:
        """The record's ``players``: seat, handle, stack and status."""
        hand = self.loop.hand
        running = hand is not None and not hand.over
        out = []
        for s in self.state.seats:
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
