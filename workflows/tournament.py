"""TournamentWorkflow: one tournament from registration onwards (id ``tournament-<id>``).

All state lives in one model so it can be carried across continue-as-new; every rule comes
from ``domain/`` and every side effect is an activity (``workflows/effects.py``). Calls that
change state are Updates whose validators refuse bad calls before anything reaches history;
registration's handlers leave their requests to its loop, which re-checks each (a concurrent
call may have changed the state between validation and execution) and does the work.

The class is assembled from parts: registration (workflows/tournament_registration.py),
settlement (workflows/tournament_settlement.py) and shared bookkeeping
(workflows/tournament_base.py); this module holds the life from seal to end.
"""

from __future__ import annotations

import asyncio
import hmac

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.blinds import resolve_blinds
    from domain.clock import level_deadline_ms, level_started_at_ms
    from domain.errors import DomainError, ErrorCode
    from domain.operations import verify_force_end
    from domain.settings import TournamentSettings, validate_settings
    from domain.standings import force_end_ranking, order_busts
    from wire.events import (
        BlindLevelChanged,
        PlayerEliminated,
        TournamentHandResult,
        TournamentStateChanged,
    )
    from wire.ids import table_workflow_id, tournament_workflow_id
    from wire.messages import (
        CancelInput,
        CreateTournamentInput,
        EntrantStatus,
        ForceEndInput,
        HandRow,
        Placing,
        TournamentPhase,
        TournamentState,
        TournamentView,
    )
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
    from workflows.inbox import Inbox
    from workflows.table import TableWorkflow
    from workflows.tournament_entries import START_GRACE
    from workflows.tournament_registration import REGISTRATION_LOOP_PATCH, RegistrationMixin
    from workflows.tournament_settlement import SettlementMixin

REPORTS_PATCH = "reports-v2"
"""From this patch on, a table signs its reports (``report_mac``) and the tournament takes each
hand once, in order, and the table's end once (security review N1)."""

HANDS_PER_RUN = 300
"""Continue-as-new after this many hands (each costs the tournament ~15 history events)."""


@workflow.defn
class TournamentWorkflow(RegistrationMixin, SettlementMixin):
    @workflow.init
    def __init__(self, inp: CreateTournamentInput) -> None:
        if inp.carry is not None and workflow.info().continued_run_id is None:
            # A carried state is this workflow's own, handed over by its continue-as-new; one
            # that comes with a fresh start (forged: it could be "settling" with payouts to
            # anyone) is refused before anything runs (security review C2).
            raise ApplicationError(
                "a tournament's carried state is accepted only from its own continue-as-new",
                type=ErrorCode.INVALID_STATE.value,
                non_retryable=True,
            )
        if workflow.info().workflow_id != tournament_workflow_id(inp.tournament_id):
            # Its money keys (escrow, entries, payouts) are the tournament id's: a workflow
            # under another id must not move another tournament's escrow.
            raise ApplicationError(
                f"tournament {inp.tournament_id} runs only as workflow tournament-"
                f"{inp.tournament_id}",
                type=ErrorCode.INVALID_STATE.value,
                non_retryable=True,
            )
        self.settings: TournamentSettings = validate_settings(inp.settings)
        self.inp = inp
        self.raw_settings = inp.settings
        self.s = inp.carry or TournamentState(tournament_id=inp.tournament_id, name=inp.name)
        # Registration's requests, fee moves and reserve alarms (its loop serves them).
        self.inbox = Inbox()
        self.collected: list[tuple[int, str, ActivityError | None]] = []
        self.parked_cancel: list[tuple[int, CancelInput]] = []
        self.alarms: dict[tuple[str, int], Alarm] = {}
        self.expired: list[tuple[str, int]] = []
        self.fee_moves: list[asyncio.Task[None]] = []
        self.lock = asyncio.Lock()  # the legacy registration's (runs from before the patch)
        self.by_loop = True
        # Updates accepted by this run, and whether it is handing over to a fresh one.
        self.updates_this_run = 0
        self.draining = False
        # Entrant rows reference the tournament row: handlers wait until it exists.
        self.row_saved = inp.carry is not None

    @workflow.run
    async def run(self, inp: CreateTournamentInput) -> TournamentView:
        # First, before any command: whether this run serves registration from its loop.
        self.by_loop = workflow.patched(REGISTRATION_LOOP_PATCH)
        if inp.carry is None:
            await self._save_tournament()
            self.row_saved = True
        if self.s.phase is TournamentPhase.REGISTERING:
            await self._registration()
        if self.s.phase is TournamentPhase.STARTING:
            await self._start()
        if self.s.phase is TournamentPhase.PLAYING:
            await self._play()
        if self.s.phase in (TournamentPhase.ENDED, TournamentPhase.SETTLING):
            await self._settle()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._view()

    async def _start(self) -> None:
        """After the grace, seat the field at the table with starting stacks: `playing`."""
        await workflow.sleep(START_GRACE, summary="start grace")
        paid = [e for e in self.s.entrants.values() if e.status is EntrantStatus.PAID]
        seated: dict[str, int] = {e.player_id: e.seat for e in paid if e.seat is not None}
        assert len(seated) == len(paid), "every paid entrant was seated at the seal"
        # From an activity's result, not workflow.now(): the level deadlines follow from it,
        # and a decision must never rest on a clock a replay could read differently.
        self.s.play_start_ms = await effects.read_clock_ms()
        self.s.stacks = {e.player_id: self.settings.starting_stack for e in paid}
        self.s.table_workflow_id = table_workflow_id(self.s.tournament_id)
        self.s.table_secret = await effects.new_report_secret(self.s.table_workflow_id)
        self.s.reports_v2 = workflow.patched(REPORTS_PATCH)
        await workflow.start_child_workflow(
            TableWorkflow.run,
            TableState(
                table_id=self.s.table_workflow_id,
                tournament_id=self.s.tournament_id,
                parent_workflow_id=workflow.info().workflow_id,
                seat_count=self.settings.seats,
                settings=self.raw_settings,
                play_start_ms=self.s.play_start_ms,
                seats=[
                    TableSeat(seat=seat, player_id=player, stack=self.settings.starting_stack)
                    for player, seat in sorted(seated.items(), key=lambda item: item[1])
                ],
                hand_pause_ms=self.inp.hand_pause_ms,
                report_secret=self.s.table_secret,
                report_mac=self.s.reports_v2,
            ),
            id=self.s.table_workflow_id,
            # The tournament manages its table's end itself (and survives continue-as-new).
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"table 1 of tournament {self.s.tournament_id}",
        )
        self.s.phase = TournamentPhase.PLAYING
        self._bump()
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "state:playing",
            TournamentStateChanged(
                state="playing", play_started_at=self.s.play_start_ms, current_level=0
            ),
        )

    async def _play(self) -> None:
        """The level clock and the hand boundaries until one player is left (or force-end).

        The loop takes one input at a time in the order they happened (see ``_level_first``);
        it never asks which awaitable woke it, and never compares the clock with a deadline.
        """
        assert self.s.play_start_ms is not None
        hands_this_run = 0
        alarm = await self._level_alarm()
        while self.s.phase is TournamentPhase.PLAYING:
            await workflow.wait_condition(
                lambda alarm=alarm: (  # type: ignore[misc]
                    alarm.fired
                    or bool(self.s.pending_hands)
                    or self.s.table_done is not None
                    or (self.s.force_end_requested and not self.s.stop_sent)
                )
            )
            if self._level_first(alarm):
                await self._next_level()
                alarm = await self._level_alarm()
            elif self.s.pending_hands:
                await self._hand_boundary(self.s.pending_hands.pop(0))
                hands_this_run += 1
            elif self.s.force_end_requested and not self.s.stop_sent:
                self.s.stop_sent = True
                assert self.s.table_workflow_id is not None
                table: workflow.ExternalWorkflowHandle[TableWorkflow] = (
                    workflow.get_external_workflow_handle_for(
                        TableWorkflow.run, self.s.table_workflow_id
                    )
                )
                if self.s.reports_v2:
                    order = StopOrder(table_id=self.s.table_workflow_id)
                    order.mac = report_mac(self.s.table_secret, STOP, order.table_id, 0, order)
                    await table.signal(TableWorkflow.stop, order)
                else:
                    await table.signal(TableWorkflow.stop)
            elif self.s.table_done is not None:
                await self._end_by_ranking()
            if (
                self.s.phase is TournamentPhase.PLAYING
                and not self.s.pending_hands
                and (
                    hands_this_run >= HANDS_PER_RUN
                    or workflow.info().is_continue_as_new_suggested()
                )
            ):
                await workflow.wait_condition(workflow.all_handlers_finished)
                if not self.s.pending_hands and not alarm.fired:
                    alarm.cancel()
                    workflow.continue_as_new(self.inp.model_copy(update={"carry": self.s}))

    async def _level_alarm(self) -> Alarm:
        assert self.s.play_start_ms is not None
        deadline = level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level)
        return await Alarm.until(deadline, f"level {self.s.level} deadline")

    def _level_first(self, alarm: Alarm) -> bool:
        """Does the level deadline come before the next hand report?

        A task may carry both (a worker died, another took over); the level goes first only
        if the hand ended at or after the deadline, by the table's clock in the report. So
        the order is the order they happened, however the SDK batched them.
        """
        if not alarm.fired:
            return False
        if not self.s.pending_hands:
            return True
        assert self.s.play_start_ms is not None
        deadline = level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level)
        return self.s.pending_hands[0].ended_at_ms >= deadline

    async def _next_level(self) -> None:
        """A level's timer fired: the next level (a missed one's timer fires at once after)."""
        assert self.s.play_start_ms is not None
        self.s.level += 1
        self._bump()
        blinds = resolve_blinds(self.settings, self.s.level)
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            f"level:{self.s.level}",
            BlindLevelChanged(
                level=self.s.level,
                small_blind=blinds.sb,
                big_blind=blinds.bb,
                ante=blinds.ante,
                level_ends_at=level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level),
            ),
        )

    async def _hand_boundary(self, report: HandReport) -> None:
        """Record a finished hand, order its busts, and end the tournament at one survivor."""
        players = {e.seat: e.player_id for e in self.s.entrants.values() if e.seat is not None}
        alive_before = sum(1 for chips in self.s.stacks.values() if chips > 0)
        stacks = {players[seat]: chips for seat, chips in report.stacks_after.items()}
        total = sum(stacks.values())
        expected = (self.s.field_size or 0) * self.settings.starting_stack
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
        self.s.stacks = stacks
        self.s.finishes.extend(finishes)
        self.s.hands_played = report.hand_no
        self.s.auto_folds = report.auto_folds
        self._bump()
        await effects.record_hand(
            HandRow(
                tournament_id=self.s.tournament_id,
                table_id=report.table_id,
                hand_no=report.hand_no,
                level=report.level,
                record=report.record,
                eliminations=finishes,
                view=self._view(),
            )
        )
        for finish in finishes:
            if finish.place == 1:
                continue
            await effects.publish(
                self.s.tournament_id,
                f"eliminated:{finish.player_id}",
                PlayerEliminated(
                    player_id=finish.player_id,
                    place=finish.place,
                    rank=finish.rank,
                    hand_number=report.hand_no,
                ),
            )
        await effects.publish(
            self.s.tournament_id,
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
        if len(alive) == 1:
            await self._end()

    async def _end_by_ranking(self) -> None:
        """Force-end: the table stopped; live players take the top places by stack."""
        result = self.s.table_done
        assert result is not None
        players = {e.seat: e.player_id for e in self.s.entrants.values() if e.seat is not None}
        stacks = {players[seat]: chips for seat, chips in result.stacks.items()}
        self.s.stacks = stacks
        live = {p: chips for p, chips in stacks.items() if chips > 0}
        ranked = force_end_ranking(live)
        self.s.finishes.extend(
            Placing(player_id=f.entrant, place=f.place, rank=f.rank) for f in ranked
        )
        self.s.auto_folds = result.auto_folds
        self._bump()
        await effects.record_hand(
            HandRow(
                tournament_id=self.s.tournament_id,
                table_id=result.table_id,
                hand_no=0,
                level=self.s.level,
                record={"force_end": True, "stacks": stacks},
                eliminations=[f for f in self.s.finishes if f.hand_number is None],
                view=self._view(),
            )
        )
        await self._end()

    async def _end(self) -> None:
        self.s.phase = TournamentPhase.ENDED
        self.s.ended_at_ms = self._now_ms()
        self._bump()
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "state:ended",
            TournamentStateChanged(
                state="ended", ended_at=self.s.ended_at_ms, final_standings=self._standings()
            ),
        )

    @property
    def seen_updates(self) -> dict[str, int]:
        """The Update ids taken lately, carried across continue-as-new (core/handler_binding)."""
        return self.s.seen_updates

    # -- table signals -------------------------------------------------------------------
    @workflow.signal(name=HAND_COMPLETED)
    def hand_completed(self, report: HandReport) -> None:
        if not self._from_our_table(report, report.hand_no, HAND_COMPLETED):
            return
        if self.s.reports_v2 and report.hand_no != self._next_hand_no():
            # A report copied out of this workflow's own history and sent again (security
            # review N1) verifies, but it is not the next hand: taking it would put the stacks
            # back and place its busts a second time.
            workflow.logger.warning(
                "ignored hand_completed for hand %s: the next hand is %s",
                report.hand_no,
                self._next_hand_no(),
            )
            return
        self.s.pending_hands.append(report)

    @workflow.signal(name=TABLE_FINISHED)
    def table_finished(self, result: TableResult) -> None:
        if not self._from_our_table(result, result.hands_played, TABLE_FINISHED):
            return
        if self.s.reports_v2 and self.s.table_done is not None:
            workflow.logger.warning("ignored a second table_finished")
            return
        self.s.table_done = result

    def _next_hand_no(self) -> int:
        """The hand the next report must be for: after the last one taken (queued or done)."""
        if self.s.pending_hands:
            return self.s.pending_hands[-1].hand_no + 1
        return self.s.hands_played + 1

    def _from_our_table(self, report: HandReport | TableResult, number: int, what: str) -> bool:
        """Reports count only from this tournament's own table, which alone knows the secret
        the tournament gave it (security review C2: anyone who can reach Temporal can send a
        signal; Temporal does not say who sent it). From ``reports-v2`` the table signs each
        report over its id, number and content instead of carrying the secret inside it."""
        ours = self.s.table_workflow_id
        if ours is not None and report.table_id == ours and self.s.table_secret:
            if self.s.reports_v2:
                expected = report_mac(self.s.table_secret, what, ours, number, report)
                if hmac.compare_digest(report.mac, expected):
                    return True
            elif hmac.compare_digest(report.secret, self.s.table_secret):
                return True
        workflow.logger.warning("ignored a %s signal that is not from table %s", what, ours)
        return False

    # -- operator updates ----------------------------------------------------------------
    @workflow.update
    async def force_end(self, req: ForceEndInput) -> TournamentView:
        """Stop a wedged tournament: the table stops, live seats are ranked by stack. The
        handler only records the request; the play loop tells the table."""
        self.updates_this_run += 1
        self._recheck(self._verify_force_end, req)
        if not self.s.force_end_requested:
            self.s.force_end_requested = True
            self._bump()
        await workflow.wait_condition(lambda: self.s.phase is not TournamentPhase.PLAYING)
        return self._view()

    @force_end.validator
    def _validate_force_end(self, req: ForceEndInput) -> None:
        """The level-age rule is checked here only: a validator is never replayed, so a
        history whose force-end was accepted under another minimum (or before the rule lived
        here) replays unchanged. The handler re-checks what can change meanwhile: the phase."""
        self._recheck(self._verify_force_end, req)
        start = self.s.play_start_ms
        started = None if start is None else level_started_at_ms(self.settings, start, self.s.level)
        self._recheck(
            lambda now_ms: verify_force_end(
                self.s.phase.value,
                started,
                now_ms,
                min_level_age_ms=self.inp.force_end_min_level_age_seconds * 1000,
            ),
            self._now_ms(),
        )

    def _verify_force_end(self, _req: ForceEndInput) -> None:
        if self.s.phase is not TournamentPhase.PLAYING:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"cannot force-end from state '{self.s.phase.value}': only a playing tournament",
            )

    # -- queries -----------------------------------------------------------------------
    @workflow.query
    def state(self) -> TournamentView:
        return self._view()
