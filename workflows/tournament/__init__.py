"""TournamentWorkflow: one tournament from registration onwards (id ``tournament-<id>``).

All state lives in one model so it can be carried across continue-as-new; every rule comes
from ``domain/`` and every side effect is an activity (``workflows/effects.py``). Calls that
change state are Updates whose validators refuse bad calls before anything reaches history;
registration's handlers leave their requests to its loop, which re-checks each (a concurrent
call may have changed the state between validation and execution) and does the work.

The workflow class is thin: ``run`` steps through the phases and each handler is a two-line
delegation to one of the parts it composes, as the table workflows compose their hand loop:

- ``books.py`` (:class:`Books`): the state, the settings, the view, the rows and the lifecycle
  span, which every other part holds;
- ``entries.py``: the entry rules (``domain/registration.py``), the money steps of an entry,
  and the seal;
- ``registration.py``: registration served by its loop, or ``registration_legacy.py``, the
  design before it, chosen once per run by ``REGISTRATION_LOOP_PATCH``;
- ``play.py``: the table, the level clock, hand boundaries, force-end and the end;
- ``tables.py``: an MTT's table manager (many tables, moves at hand boundaries), which play
  calls only when ``maxEntrants`` is above ``seats``;
- ``settlement.py``: payouts, the rake, the reconciler's retries, then ``closed``.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import ErrorCode
    from domain.settings import validate_settings
    from wire.ids import tournament_workflow_id
    from wire.messages import (
        CancelInput,
        CreateTournamentInput,
        ForceEndInput,
        LeaveResult,
        PayEntryInput,
        RegisterInput,
        RegisterResult,
        RetryPayoutsInput,
        TournamentPhase,
        TournamentState,
        TournamentView,
        UnregisterInput,
    )
    from wire.mtt import MttView
    from wire.signals import HAND_COMPLETED, TABLE_FINISHED
    from wire.table_messages import HandReport, TableResult
    from workflows.effects import MONEY_IDS_PATCH
    from workflows.tournament.books import DELTAS_PATCH, Books
    from workflows.tournament.entries import Entries
    from workflows.tournament.play import LEVEL_REARM_PATCH, Play
    from workflows.tournament.registration import REGISTRATION_LOOP_PATCH, Registration
    from workflows.tournament.registration_legacy import LegacyRegistration
    from workflows.tournament.settlement import ENTRY_WALLETS_PATCH, Settlement
    from workflows.tournament.tables import (
        BUSTS_BY_SEAT_PATCH,
        H4H_PLACES_PATCH,
        MTT_EVENTS_PATCH,
        Tables,
    )

__all__ = ["TournamentWorkflow"]


@workflow.defn
class TournamentWorkflow:
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
        state = inp.carry or TournamentState(tournament_id=inp.tournament_id, name=inp.name)
        self.books = Books(inp, validate_settings(inp.settings), state)
        self.entries = Entries(self.books)
        self.registration: Registration | LegacyRegistration = Registration(
            self.books, self.entries
        )
        """Registration's design for this run: the run's first step may replace it."""
        self.mtt = Tables(self.books)
        self.play = Play(self.books, self.mtt)
        self.settlement = Settlement(self.books)

    @workflow.run
    async def run(self, inp: CreateTournamentInput) -> TournamentView:
        b = self.books
        # First, before any command: whether this run serves registration from its loop.
        if not workflow.patched(REGISTRATION_LOOP_PATCH):
            self.registration = LegacyRegistration(b, self.entries)
        if b.settings.is_mtt:
            # Then, for an MTT: whether a hand-for-hand round's busts are placed together.
            self.mtt.round_places = workflow.patched(H4H_PLACES_PATCH)
            # And whether its table moves, breaks and hand-for-hand go to the event log.
            self.mtt.events_on = workflow.patched(MTT_EVENTS_PATCH)
            # And whether a report's busts are taken by seat (not by the button's order).
            self.mtt.busts_by_seat = workflow.patched(BUSTS_BY_SEAT_PATCH)
            # And whether each prize goes to its finishing entry's wallet (not the latest's).
            b.entry_wallets_on = workflow.patched(ENTRY_WALLETS_PATCH)
        # Whether it publishes its view in parts (a run from before publishes it whole).
        b.deltas = workflow.patched(DELTAS_PATCH)
        # Whether play takes a fired level first and arms the level again at each other input
        # (so no batching of their tasks can reorder them on replay).
        self.play.level_rearm = workflow.patched(LEVEL_REARM_PATCH)
        # Whether its money activities carry their move's own id (the codec binds to it).
        b.money_ids = workflow.patched(MONEY_IDS_PATCH)
        if inp.carry is None:
            await b.save_tournament()
            b.row_saved = True
        if b.s.phase is TournamentPhase.REGISTERING:
            await self.registration.run()
        if b.s.phase is TournamentPhase.STARTING:
            await self.play.start()
        if b.s.phase is TournamentPhase.PLAYING:
            if b.s.late is not None and b.s.late.open:
                # An MTT's late registration runs beside play until its close (docs/mtt.md);
                # only runs with the registration loop can have it (the settings were refused
                # before), and gather fails the task if either part raises.
                assert isinstance(self.registration, Registration)
                await asyncio.gather(self.play.run(), self.registration.run_late(self.play))
            else:
                await self.play.run()
        if b.s.phase in (TournamentPhase.ENDED, TournamentPhase.SETTLING):
            await self.settlement.run()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return b.view()

    @property
    def seen_updates(self) -> dict[str, int]:
        """The Update ids taken lately, carried across continue-as-new (core/handler_binding)."""
        return self.books.s.seen_updates

    # -- registration --------------------------------------------------------------------
    @workflow.update
    async def register(self, req: RegisterInput) -> RegisterResult:
        self.books.updates_this_run += 1
        return await self.registration.register(req)

    @register.validator
    def _validate_register(self, req: RegisterInput) -> None:
        self.registration.validate_register(req)

    @workflow.update
    async def pay_entry(self, req: PayEntryInput) -> RegisterResult:
        self.books.updates_this_run += 1
        return await self.registration.pay_entry(req)

    @pay_entry.validator
    def _validate_pay(self, req: PayEntryInput) -> None:
        self.registration.validate_pay(req)

    @workflow.update
    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        self.books.updates_this_run += 1
        return await self.registration.unregister(req)

    @unregister.validator
    def _validate_unregister(self, req: UnregisterInput) -> None:
        self.registration.validate_unregister(req)

    @workflow.update
    async def cancel(self, req: CancelInput) -> TournamentView:
        self.books.updates_this_run += 1
        return await self.registration.cancel(req)

    @cancel.validator
    def _validate_cancel(self, req: CancelInput) -> None:
        self.registration.validate_cancel(req)

    # -- play ----------------------------------------------------------------------------
    @workflow.signal(name=HAND_COMPLETED)
    def hand_completed(self, report: HandReport) -> None:
        self.play.hand_completed(report)

    @workflow.signal(name=TABLE_FINISHED)
    def table_finished(self, result: TableResult) -> None:
        self.play.table_finished(result)

    @workflow.update
    async def force_end(self, req: ForceEndInput) -> TournamentView:
        self.books.updates_this_run += 1
        return await self.play.force_end(req)

    @force_end.validator
    def _validate_force_end(self, req: ForceEndInput) -> None:
        self.play.validate_force_end(req)

    # -- settlement ----------------------------------------------------------------------
    @workflow.update
    async def retry_payouts(self, req: RetryPayoutsInput) -> TournamentView:
        self.books.updates_this_run += 1
        return await self.settlement.retry_payouts(req)

    @retry_payouts.validator
    def _validate_retry_payouts(self, req: RetryPayoutsInput) -> None:
        self.settlement.validate_retry_payouts(req)

    # -- queries -------------------------------------------------------------------------
    @workflow.query
    def state(self) -> TournamentView:
        return self.books.view()

    @workflow.query
    def tables(self) -> MttView | None:
        """An MTT's tables, their seats and the entries in transit (None for a SnG)."""
        return self.mtt.view()
