"""Play: from the sealed field to the end. The start (the table child workflow), the level
clock, each hand boundary's bookkeeping, the table's signed reports, an operator's force-end
and the end. One part of TournamentWorkflow (workflows/tournament/__init__.py)."""

from __future__ import annotations

import hmac

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.blinds import resolve_blinds
    from domain.clock import level_deadline_ms, level_started_at_ms
    from domain.operations import verify_force_end, verify_playing
    from domain.payouts import prize_pool
    from domain.standings import force_end_ranking, order_busts
    from wire.events import (
        BlindLevelChanged,
        LateRegistrationClosed,
        PlayerEliminated,
        TournamentHandResult,
        TournamentStateChanged,
    )
    from wire.ids import table_workflow_id
    from wire.messages import (
        EntrantStatus,
        EntrantView,
        ForceEndInput,
        HandRow,
        Placing,
        TournamentPhase,
        TournamentView,
    )
    from wire.mtt import LateRegistration
    from wire.signals import HAND_COMPLETED, STOP, TABLE_FINISHED
    from wire.table_messages import (
        HandReport,
        StopOrder,
        TableResult,
        TableSeat,
        TableState,
        report_mac,
    )
    from workflows import effects
    from workflows.alarm import Alarm
    from workflows.errors import coded
    from workflows.table import TableWorkflow
    from workflows.tournament.books import Books
    from workflows.tournament.entries import START_GRACE
    from workflows.tournament.tables import Tables

REPORTS_PATCH = "reports-v2"
"""From this patch on, a table signs its reports (``report_mac``) and the tournament takes each
hand once, in order, and the table's end once (security review N1)."""

LEVEL_REARM_PATCH = "level-rearm-v1"
"""From this patch on, play's loop takes a level whose timer fired before anything else, and
arms the level's timer again each time it takes another input (a hand report, a force-end, the
table's result), so that the order it takes them in is the same however their tasks were
batched (``Play.level_first``; docs/durability.md rule 3). Asked at each run's start."""

HANDS_PER_RUN = 300
"""Continue-as-new after this many hands (each costs the tournament ~17 history events, two of
them the level's timer armed again: ``level-rearm-v1``)."""


class Play:
    def __init__(self, books: Books, tables: Tables) -> None:
        self.books = books
        self.tables = tables
        """An MTT's table manager (``maxEntrants`` above ``seats``): a Sit-and-Go never
        calls it, so its commands are the same as before."""
        self.level_rearm = False
        """``LEVEL_REARM_PATCH``, asked at the run's start."""

    async def start(self) -> None:
        """After the grace, seat the field at the table with starting stacks: `playing`."""
        b = self.books
        await workflow.sleep(START_GRACE, summary="start grace")
        paid = [e for e in b.s.entrants.values() if e.status is EntrantStatus.PAID]
        seated: dict[str, int] = {e.player_id: e.seat for e in paid if e.seat is not None}
        assert len(seated) == len(paid), "every paid entrant was seated at the seal"
        # From an activity's result, not workflow.now(): the level deadlines follow from it,
        # and a decision must never rest on a clock a replay could read differently.
        b.s.play_start_ms = await effects.read_clock_ms()
        b.s.stacks = {e.player_id: b.settings.starting_stack for e in paid}
        if b.settings.late_registration_seconds:
            # Registration stays open into play until its close (an MTT only: the settings
            # refuse it for a Sit-and-Go, so no recorded history comes here).
            b.s.late = LateRegistration(
                closes_at_ms=b.s.play_start_ms + b.settings.late_registration_seconds * 1000,
                entries={e.player_id: 1 for e in paid},
            )
        if b.settings.is_mtt:
            await self.tables.start()
        else:
            await self.start_table(seated)
        b.s.phase = TournamentPhase.PLAYING
        b.bump()
        await b.save_tournament()
        await effects.publish(
            b.s.tournament_id,
            "state:playing",
            TournamentStateChanged(
                state="playing", play_started_at=b.s.play_start_ms, current_level=0
            ),
        )

    async def start_table(self, seated: dict[str, int]) -> None:
        """A Sit-and-Go's one table."""
        b = self.books
        assert b.s.play_start_ms is not None
        b.s.table_workflow_id = table_workflow_id(b.s.tournament_id)
        b.s.table_secret = await effects.new_report_secret(b.s.table_workflow_id)
        b.s.reports_v2 = workflow.patched(REPORTS_PATCH)
        await workflow.start_child_workflow(
            TableWorkflow.run,
            TableState(
                table_id=b.s.table_workflow_id,
                tournament_id=b.s.tournament_id,
                parent_workflow_id=workflow.info().workflow_id,
                seat_count=b.settings.seats,
                settings=b.raw_settings,
                play_start_ms=b.s.play_start_ms,
                seats=[
                    TableSeat(seat=seat, player_id=player, stack=b.settings.starting_stack)
                    for player, seat in sorted(seated.items(), key=lambda item: item[1])
                ],
                hand_pause_ms=b.inp.hand_pause_ms,
                report_secret=b.s.table_secret,
                report_mac=b.s.reports_v2,
            ),
            id=b.s.table_workflow_id,
            # The tournament manages its table's end itself (and survives continue-as-new).
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"table 1 of tournament {b.s.tournament_id}",
        )

    async def run(self) -> None:
        """The level clock and the hand boundaries until one player is left (or force-end).

        The loop takes one input at a time in the order they happened (see ``level_first``);
        it never asks which awaitable woke it, and never compares the clock with a deadline.
        """
        b = self.books
        assert b.s.play_start_ms is not None
        hands_this_run = 0
        alarm = await self.level_alarm()
        while b.s.phase is TournamentPhase.PLAYING:
            b.play_waiting = True
            await workflow.wait_condition(
                lambda alarm=alarm: (  # type: ignore[misc]
                    alarm.fired
                    or bool(b.s.pending_hands)
                    or b.s.table_done is not None
                    or (b.s.force_end_requested and not b.s.stop_sent)
                )
            )
            b.play_waiting = False
            if self.level_first(alarm):
                await self.next_level()
                alarm = await self.level_alarm()
            else:
                if self.level_rearm:
                    # Whatever this pass takes, a level timer that fires after it is one armed
                    # in this task: its firing answers a command of this task, so no batching
                    # can record it in one task with this input (level_first).
                    alarm.cancel()
                    alarm = await self.level_alarm()
                if b.s.pending_hands:
                    await self.hand_boundary(b.s.pending_hands.pop(0))
                    hands_this_run += 1
                elif b.s.force_end_requested and not b.s.stop_sent:
                    b.s.stop_sent = True
                    if b.s.mtt is not None:
                        await self.tables.stop_all()
                        continue
                    await self.stop_table()
                elif b.s.table_done is not None:
                    await self.end_by_ranking()
            if (
                b.s.phase is TournamentPhase.PLAYING
                and not b.s.pending_hands
                # While late registration's loop runs beside this one (fees may be moving,
                # reserves being released) the run goes on (docs/mtt.md).
                and not b.late_running
                and (
                    hands_this_run >= min(HANDS_PER_RUN, b.inp.hands_per_run)
                    or workflow.info().is_continue_as_new_suggested()
                )
            ):
                await workflow.wait_condition(workflow.all_handlers_finished)
                if not b.s.pending_hands and not alarm.fired:
                    alarm.cancel()
                    workflow.continue_as_new(b.carried())

    async def stop_table(self) -> None:
        """A force-end's order to a Sit-and-Go's table."""
        b = self.books
        assert b.s.table_workflow_id is not None
        table: workflow.ExternalWorkflowHandle[TableWorkflow] = (
            workflow.get_external_workflow_handle_for(TableWorkflow.run, b.s.table_workflow_id)
        )
        if b.s.reports_v2:
            order = StopOrder(table_id=b.s.table_workflow_id)
            order.mac = report_mac(b.s.table_secret, STOP, order.table_id, 0, order)
            await table.signal(TableWorkflow.stop, order)
        else:
            await table.signal(TableWorkflow.stop)

    def at_rest(self) -> bool:
        """Play waits for its next input with none to take (late registration's hand-over,
        ``Registration.hand_over``): no boundary half taken, no hand report, table result
        or force-end waiting. A level deadline that fired meanwhile is taken by the next run
        (its alarm, armed from the books, fires at once)."""
        b = self.books
        return (
            b.play_waiting
            and not b.s.pending_hands
            and b.s.table_done is None
            and not (b.s.force_end_requested and not b.s.stop_sent)
        )

    async def level_alarm(self) -> Alarm:
        b = self.books
        assert b.s.play_start_ms is not None
        deadline = level_deadline_ms(b.settings, b.s.play_start_ms, b.s.level)
        return await Alarm.until(deadline, f"level {b.s.level} deadline")

    def level_first(self, alarm: Alarm) -> bool:
        """Does the level deadline come before the next input?

        From ``level-rearm-v1``: whenever its timer fired. The loop arms the level's timer
        again each time it takes another input, so a firing that reaches it together with an
        input either came together for real or belongs to a timer armed after that input was
        taken, which answers a command and so is never recorded in one task with it. Either
        way the level goes first, however the tasks were batched (CI-47: ordering by the
        hand's end took first a report whose hand ended before the deadline but which came
        after the level was taken in a task of its own).

        Before it: the level went first only if the hand ended at or after the deadline, by
        the table's clock in the report.
        """
        b = self.books
        if not alarm.fired:
            return False
        if not b.s.pending_hands or self.level_rearm:
            return True
        assert b.s.play_start_ms is not None
        deadline = level_deadline_ms(b.settings, b.s.play_start_ms, b.s.level)
        return b.s.pending_hands[0].ended_at_ms >= deadline

    async def next_level(self) -> None:
        """A level's timer fired: the next level (a missed one's timer fires at once after)."""
        b = self.books
        assert b.s.play_start_ms is not None
        b.s.level += 1
        b.bump()
        blinds = resolve_blinds(b.settings, b.s.level)
        await b.save_tournament()
        await effects.publish(
            b.s.tournament_id,
            f"level:{b.s.level}",
            BlindLevelChanged(
                level=b.s.level,
                small_blind=blinds.sb,
                big_blind=blinds.bb,
                ante=blinds.ante,
                level_ends_at=level_deadline_ms(b.settings, b.s.play_start_ms, b.s.level),
            ),
        )

    async def hand_boundary(self, report: HandReport) -> None:
        """Record a finished hand, order its busts, and end the tournament at one survivor."""
        b = self.books
        if b.s.mtt is not None:
            finishes, stacks = self.tables.take_hand(report)
            b.s.finishes.extend(finishes)
            b.s.hands_played += 1
            b.bump()
            await self.publish_hand(report, finishes, stacks)
            await self.tables.after_hand()
            if sum(1 for chips in b.s.stacks.values() if chips > 0) == 1:
                # One entry left while late registration is open: the field is final now.
                await self.close_late()
                await self.end()
            return
        players = {e.seat: e.player_id for e in b.s.entrants.values() if e.seat is not None}
        alive_before = sum(1 for chips in b.s.stacks.values() if chips > 0)
        stacks = {players[seat]: chips for seat, chips in report.stacks_after.items()}
        total = sum(stacks.values())
        expected = (b.s.field_size or 0) * b.settings.starting_stack
        if total != expected:
            # An invariant broke: fail the workflow task (it retries, visibly) rather than
            # record a wrong hand.
            raise RuntimeError(f"chips not conserved after hand {report.hand_no}: {total}")
        busts = order_busts(
            [(players[b["seat"]], b["stack_before"]) for b in report.busted],
            alive_before=alive_before,
        )
        finishes = [
            Placing(player_id=f.entrant, place=f.place, rank=f.rank, hand_number=report.hand_no)
            for f in busts
        ]
        alive = [p for p, chips in stacks.items() if chips > 0]
        if len(alive) == 1:
            finishes.append(
                Placing(player_id=alive[0], place=1, rank=1, hand_number=report.hand_no)
            )
        b.s.stacks = stacks
        b.s.finishes.extend(finishes)
        b.s.hands_played = report.hand_no
        b.s.auto_folds = report.auto_folds
        b.bump()
        await self.publish_hand(report, finishes, stacks)
        if len(alive) == 1:
            await self.end()

    async def publish_hand(
        self, report: HandReport, finishes: list[Placing], stacks: dict[str, int]
    ) -> None:
        """The hand's row, its eliminations and its result, as events."""
        b = self.books
        async with b.publishing() as (view, delta):
            await effects.record_hand(
                HandRow(
                    tournament_id=b.s.tournament_id,
                    table_id=report.table_id,
                    hand_no=report.hand_no,
                    level=report.level,
                    record=report.record,
                    eliminations=finishes,
                    view=view,
                    delta=delta,
                )
            )
        for finish in finishes:
            if finish.place == 1:
                continue
            await effects.publish(
                b.s.tournament_id,
                self.elimination_key(finish),
                PlayerEliminated(
                    player_id=finish.player_id,
                    place=finish.place,
                    rank=finish.rank,
                    # A hand-for-hand round's busts are published with the report that
                    # closed it, each with its own table's hand.
                    hand_number=finish.hand_number or report.hand_no,
                ),
            )
        await effects.publish(
            b.s.tournament_id,
            f"hand:{report.table_id}:{report.hand_no}",
            TournamentHandResult(
                table_id=report.table_id,
                hand_number=report.hand_no,
                level=report.level,
                board=report.record.get("board", []),
                pots=report.record.get("pots", []),
                shown=report.record.get("shown", {}),
                stacks=stacks,
            ),
        )

    async def end_by_ranking(self) -> None:
        """Force-end: the table stopped; live players take the top places by stack."""
        b = self.books
        result = b.s.table_done
        assert result is not None
        if b.s.mtt is not None:
            # A force-end while late registration is open closes it: its held busts go below
            # the live entries, like a hand-for-hand round's whose other tables were stopped.
            await self.close_late()
            placed = self.tables.close_round()
            b.s.finishes.extend(placed)
            await self.publish_eliminations(placed)  # none but under ``h4h-places-v1``
            live = {p: chips for p, chips in b.s.stacks.items() if chips > 0}
            b.s.finishes.extend(
                Placing(player_id=f.entrant, place=f.place, rank=f.rank)
                for f in force_end_ranking(live)
            )
            b.bump()
            await self.end()
            return
        players = {e.seat: e.player_id for e in b.s.entrants.values() if e.seat is not None}
        stacks = {players[seat]: chips for seat, chips in result.stacks.items()}
        b.s.stacks = stacks
        live = {p: chips for p, chips in stacks.items() if chips > 0}
        ranked = force_end_ranking(live)
        b.s.finishes.extend(
            Placing(player_id=f.entrant, place=f.place, rank=f.rank) for f in ranked
        )
        b.s.auto_folds = result.auto_folds
        b.bump()
        async with b.publishing() as (view, delta):
            await effects.record_hand(
                HandRow(
                    tournament_id=b.s.tournament_id,
                    table_id=result.table_id,
                    hand_no=0,
                    level=b.s.level,
                    record={"force_end": True, "stacks": stacks},
                    eliminations=[f for f in b.s.finishes if f.hand_number is None],
                    view=view,
                    delta=delta,
                )
            )
        await self.end()

    async def publish_eliminations(self, placed: list[Placing]) -> None:
        """``player_eliminated`` for busts placed after their hand (a round's, a late
        registration's)."""
        b = self.books
        for finish in placed:
            await effects.publish(
                b.s.tournament_id,
                self.elimination_key(finish),
                PlayerEliminated(
                    player_id=finish.player_id,
                    place=finish.place,
                    rank=finish.rank,
                    hand_number=finish.hand_number or 0,
                ),
            )

    def elimination_key(self, finish: Placing) -> str:
        """The event's key (one event per key): with re-entries a player can bust twice, so
        a tournament with late registration keys it by the place too."""
        key = f"eliminated:{finish.player_id}"
        return key if self.books.s.late is None else f"{key}:{finish.place}"

    # -- late registration (an MTT's, docs/mtt.md) ---------------------------------------
    async def seat_late(self, entrant: EntrantView) -> None:
        """A late entry (or re-entry) was paid: it plays on the starting stack."""
        b = self.books
        assert b.s.late is not None and b.s.late.open
        b.s.late.entries[entrant.player_id] = b.s.late.entries.get(entrant.player_id, 0) + 1
        await self.tables.seat_late(entrant.player_id)

    async def close_late(self) -> None:
        """Late registration closes (its timer, or the tournament ended first): the field is
        final, so the busts held while it was open are placed below everyone still in, and
        from now on the paid places are the final field's (hand-for-hand may start)."""
        b = self.books
        late = b.s.late
        if late is None or not late.open:
            return
        late.open = False
        placed = self.tables.place_held()
        b.s.finishes.extend(placed)
        b.bump()
        await b.save_tournament()
        await self.publish_eliminations(placed)
        if self.tables.events_on:
            field_size = b.s.field_size or 0
            await effects.publish(
                b.s.tournament_id,
                "late_registration_closed",
                LateRegistrationClosed(
                    field_size=field_size, prize_pool=prize_pool(b.settings, field_size)
                ),
            )

    async def end(self) -> None:
        b = self.books
        b.s.phase = TournamentPhase.ENDED
        b.s.ended_at_ms = b.now_ms()
        b.bump()
        await b.save_tournament()
        await effects.publish(
            b.s.tournament_id,
            "state:ended",
            TournamentStateChanged(
                state="ended", ended_at=b.s.ended_at_ms, final_standings=b.standings()
            ),
        )

    # -- the table's reports -------------------------------------------------------------
    def hand_completed(self, report: HandReport) -> None:
        b = self.books
        if b.s.mtt is not None:
            if self.tables.take_report(report):
                b.s.pending_hands.append(report)
            return
        if not self.from_our_table(report, report.hand_no, HAND_COMPLETED):
            return
        if b.s.reports_v2 and report.hand_no != self.next_hand_no():
            # A report copied out of this workflow's own history and sent again (security
            # review N1) verifies, but it is not the next hand: taking it would put the stacks
            # back and place its busts a second time.
            workflow.logger.warning(
                "ignored hand_completed for hand %s: the next hand is %s",
                report.hand_no,
                self.next_hand_no(),
            )
            return
        b.s.pending_hands.append(report)

    def table_finished(self, result: TableResult) -> None:
        b = self.books
        if b.s.mtt is not None:
            self.tables.take_finished(result)
            return
        if not self.from_our_table(result, result.hands_played, TABLE_FINISHED):
            return
        if b.s.reports_v2 and b.s.table_done is not None:
            workflow.logger.warning("ignored a second table_finished")
            return
        b.s.table_done = result

    def next_hand_no(self) -> int:
        """The hand the next report must be for: after the last one taken (queued or done)."""
        b = self.books
        if b.s.pending_hands:
            return b.s.pending_hands[-1].hand_no + 1
        return b.s.hands_played + 1

    def from_our_table(self, report: HandReport | TableResult, number: int, what: str) -> bool:
        """Reports count only from this tournament's own table, which alone knows the secret
        the tournament gave it (security review C2: anyone who can reach Temporal can send a
        signal; Temporal does not say who sent it). From ``reports-v2`` the table signs each
        report over its id, number and content instead of carrying the secret inside it."""
        b = self.books
        ours = b.s.table_workflow_id
        if ours is not None and report.table_id == ours and b.s.table_secret:
            if b.s.reports_v2:
                expected = report_mac(b.s.table_secret, what, ours, number, report)
                if hmac.compare_digest(report.mac, expected):
                    return True
            elif hmac.compare_digest(report.secret, b.s.table_secret):
                return True
        workflow.logger.warning("ignored a %s signal that is not from table %s", what, ours)
        return False

    # -- operators -----------------------------------------------------------------------
    async def force_end(self, _req: ForceEndInput) -> TournamentView:
        """Stop a wedged tournament: the table stops, live seats are ranked by stack. The
        handler only records the request; the play loop tells the table."""
        b = self.books
        with coded():
            verify_playing(b.s.phase.value)
        if not b.s.force_end_requested:
            b.s.force_end_requested = True
            b.bump()
        await workflow.wait_condition(lambda: b.s.phase is not TournamentPhase.PLAYING)
        return b.view()

    def validate_force_end(self, _req: ForceEndInput) -> None:
        """The level-age rule is checked here only: a validator is never replayed, so a
        history whose force-end was accepted under another minimum (or before the rule lived
        here) replays unchanged. The handler re-checks what can change meanwhile: the phase."""
        b = self.books
        start = b.s.play_start_ms
        started = None if start is None else level_started_at_ms(b.settings, start, b.s.level)
        with coded():
            verify_force_end(
                b.s.phase.value,
                started,
                b.now_ms(),
                min_level_age_ms=b.inp.force_end_min_level_age_seconds * 1000,
            )
