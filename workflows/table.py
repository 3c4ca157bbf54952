"""TableWorkflow: a tournament's table, dealing hands back to back (``table-<t>-<n>``).

The hands themselves are the shared hand loop's (workflows/hand_loop.py). What makes this a
tournament's table: the blinds for a hand come from the tournament's level clock evaluated at
the deck draw's recorded time (so the table never needs to be told that a level changed);
every seat with chips is dealt in; each hand is reported to the tournament by signal, with
the table's secret; a stop from the tournament (force-end) abandons the running hand. Between
hands it may continue-as-new. A cash room is RoomWorkflow (workflows/room.py).
"""

from __future__ import annotations

import hmac
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.blinds import Blinds, resolve_blinds
    from domain.clock import level_at
    from domain.holdem import Hand
    from domain.holdem.timeouts import disconnect_grace_left
    from domain.settings import TournamentSettings, validate_settings
    from wire.mtt import BoundaryOrder
    from wire.signals import BOUNDARY, HAND_COMPLETED, STOP, TABLE_FINISHED
    from wire.table_messages import (
        HandReport,
        StopOrder,
        StreamQuery,
        TableResult,
        TableSeat,
        TableState,
        report_mac,
    )
    from workflows import effects
    from workflows.hand_loop import HANDS_PER_RUN, HandLoop, PlayerHandlers

__all__ = ["HANDS_PER_RUN", "TableWorkflow"]


@workflow.defn
class TableWorkflow(PlayerHandlers):
    """A tournament's table: the hand loop, with the tournament as its venue."""

    @workflow.init
    def __init__(self, state: TableState) -> None:
        self.settings: TournamentSettings = validate_settings(state.settings)
        self.state = state
        self.loop = HandLoop(state, self, resolve_blinds(self.settings, 0))

    @workflow.run
    async def run(self, state: TableState) -> TableResult:
        loop = self.loop
        state = self.state
        played_this_run = 0
        aborted: int | None = None
        # The run's patches, asked once at its start (``HandLoop.begin_run``): a stop is read
        # where the table waits with nothing else to take (docs/durability.md, rule 9); runs
        # from before the patch read it at each hand boundary, as they did.
        loop.begin_run(tournament=True)
        at_waits = loop.stop_at_waits
        if state.managed is not None and state.managed.opened_late and state.hand_no == 0:
            # Reached only by a table a late entrant opened (late registration was refused
            # before it, so no recorded history comes here): wait for the order that seats
            # its players, the first boundary's.
            await self.await_boundary_order()
            state.managed.opened_late = False
        while (at_waits or not state.stop_requested) and len(loop.live_seats()) >= 2:
            aborted = await loop.play_hand()
            played_this_run += 1
            if (loop.stopped if at_waits else state.stop_requested) or len(loop.live_seats()) < 2:
                break
            if state.hand_pause_ms:
                await loop.pause_between_hands()
                if (state.stop_requested and not at_waits) or loop.stopped:
                    break
            if played_this_run >= HANDS_PER_RUN or loop.run_budget_spent():
                if state.stop_requested:
                    break  # no next run for a table that was told to stop
                loop.answer_stale_intents()
                await loop.serve_until_handlers_finished()
                workflow.continue_as_new(state)
        loop.answer_stale_intents()
        loop.finish()
        await loop.flush()
        result = TableResult(
            table_id=state.table_id,
            hands_played=state.hand_no,
            stacks={s.seat: s.stack for s in state.seats},
            aborted_hand=aborted,
            auto_folds=state.auto_folds,
            secret="" if state.report_mac else state.report_secret,
        )
        if state.report_mac:
            result.mac = report_mac(
                state.report_secret, TABLE_FINISHED, state.table_id, result.hands_played, result
            )
        if state.parent_workflow_id:
            # By workflow id, not run: the tournament may have continued-as-new meanwhile.
            await workflow.get_external_workflow_handle(state.parent_workflow_id).signal(
                TABLE_FINISHED, result
            )
        await loop.serve_until_handlers_finished()
        return result

    @workflow.signal(name=STOP)
    def stop(self, order: StopOrder | None = None) -> None:
        """The tournament ended play (force-end): abandon the running hand and return stacks.

        A table that signs its reports (``reports-v2``) takes a stop only with the tournament's
        signature; an unsigned one (no payload: nothing for the codec to refuse) is ignored.
        """
        state = self.state
        if state.report_mac:
            expected = report_mac(
                state.report_secret, STOP, state.table_id, 0, order or StopOrder(table_id="")
            )
            if (
                order is None
                or order.table_id != state.table_id
                or not hmac.compare_digest(order.mac, expected)
            ):
                workflow.logger.warning("ignored a stop the tournament did not sign")
                return
        state.stop_requested = True

    # -- an MTT's table (wire/mtt.py, docs/mtt.md "The table manager") -------------------
    @workflow.signal(name=BOUNDARY)
    def boundary(self, order: BoundaryOrder) -> None:
        """The tournament's order for the boundary after the hand this table reported last:
        taken only from the tournament (signed) and only for that hand."""
        state = self.state
        managed = state.managed
        expected = report_mac(state.report_secret, BOUNDARY, state.table_id, order.hand_no, order)
        if (
            managed is None
            or order.table_id != state.table_id
            or not hmac.compare_digest(order.mac, expected)
        ):
            workflow.logger.warning("ignored a boundary order the tournament did not sign")
            return
        if order.hand_no != state.hand_no or managed.order is not None:
            workflow.logger.warning("ignored a boundary order for hand %s", order.hand_no)
            return
        managed.order = order

    async def await_boundary_order(self) -> None:
        """After reporting a hand, wait (serving requests, and reading a stop as the table's
        other waits do) for the tournament's order, then apply it: stand up, sit down."""
        loop = self.loop
        state = self.state
        managed = state.managed
        assert managed is not None
        while not await loop.wait_or_serve(
            lambda: managed.order is not None or state.stop_requested
        ):
            pass
        order = managed.order
        if order is None:
            loop.stopped = True  # a force-end: the table returns its stacks as it stands
            return
        managed.order = None
        leaving = set(order.stand_up)
        seats = [s for s in state.seats if s.seat not in leaving]
        taken = {s.seat for s in seats}
        for arrival in order.arrive:
            if arrival.seat in taken or not 0 <= arrival.seat < state.seat_count:
                # The tournament's books and the table disagree: fail the task (it retries,
                # visibly) rather than seat two players on one seat.
                raise RuntimeError(f"boundary order seats {arrival.seat}, which is not free")
            taken.add(arrival.seat)
            seats.append(
                TableSeat(
                    seat=arrival.seat,
                    player_id=arrival.player_id,
                    stack=arrival.stack,
                    sitting_out=arrival.sitting_out,
                )
            )
        state.seats = [] if order.finish else sorted(seats, key=lambda s: s.seat)
        waiting = [a.seat for a in order.arrive if a.waits]
        dealt = [s for s in loop.live_seats() if s not in waiting]
        # Waiting for the button must not leave the table unable to deal: then all are dealt.
        managed.waiting = waiting if len(dealt) >= 2 else []
        if order.redraw_button:
            state.positions = None
        loop.changed()

    # -- the venue (workflows/hand_loop.py asks these) -----------------------------------
    def blinds_at(self, drawn_at_ms: int) -> tuple[int, Blinds]:
        level = level_at(self.settings, self.state.play_start_ms, drawn_at_ms)
        return level, resolve_blinds(self.settings, level)

    def decision_seconds(self) -> int:
        return self.settings.action_timeout_seconds

    def dealt_seats(self) -> list[int]:
        """Every seat with chips (at an MTT's table, but those waiting for the button)."""
        managed = self.state.managed
        if managed is not None and managed.waiting:
            return [s for s in self.loop.live_seats() if s not in managed.waiting]
        return self.loop.live_seats()

    def details(self) -> str:
        return f"level {self.loop.level}"

    def stop_requested(self) -> bool:
        return self.state.stop_requested

    async def hand_started(self, hand: Hand) -> None:
        pass

    async def before_decision(self, hand: Hand) -> None:
        pass

    async def hand_finished(self, hand: Hand, record: dict[str, Any]) -> None:
        """Report the hand to the tournament (runs before ``level-rearm-v1`` order it by its
        ``ended_at_ms``); an MTT's table then waits for the tournament's order for this
        boundary."""
        state = self.state
        if not state.parent_workflow_id:
            return
        if state.managed is not None:
            # Who was button and blinds: the tournament balances by them (docs/mtt.md).
            record = {**record, "positions": state.positions}
            state.managed.waiting = []  # they sat out this hand: the button has passed them
        report = HandReport(
            table_id=state.table_id,
            hand_no=state.hand_no,
            level=self.loop.level,
            record=record,
            stacks_after={s.seat: s.stack for s in state.seats},
            busted=record["busted"],
            auto_folds=state.auto_folds,
            sitting_out=(
                [s.seat for s in state.seats if s.sitting_out] if state.managed is not None else []
            ),
            secret="" if state.report_mac else state.report_secret,
            ended_at_ms=self.loop.now_ms(),  # data for the tournament's ordering, not a decision
        )
        if state.report_mac:
            report.mac = report_mac(
                state.report_secret, HAND_COMPLETED, state.table_id, state.hand_no, report
            )
        await workflow.get_external_workflow_handle(state.parent_workflow_id).signal(
            HAND_COMPLETED, report
        )
        if state.managed is not None:
            await self.await_boundary_order()

    async def grace(self, seat: TableSeat) -> float:
        """From ``GRACE_PATCH`` on, a player whose stream dropped gets until the drop plus the
        settings' ``disconnectGrace``; before it a tournament's table gave no grace."""
        if not self.loop.stream_grace:
            return 0
        status = await effects.stream_status(
            StreamQuery(table_id=self.state.table_id, player_id=seat.player_id)
        )
        left = disconnect_grace_left(self.settings.disconnect_grace, status.dropped_ago)
        if left > 0 and status.dropped_ago is not None:
            seat.disconnected_at = self.loop.now_ms() - int(status.dropped_ago * 1000)
        return left

    async def serve_request(self, request: object) -> object:
        raise AssertionError(f"a tournament's table takes no {type(request).__name__}")
