"""Registration: reserve, pay exactly the fee, leave with a refund, cancel; unpaid reserves
expire after 120 s. One part of TournamentWorkflow (workflows/tournament/__init__.py), which
chooses it, or the design before it (registration_legacy.py), once by the patch."""

from __future__ import annotations

import asyncio
from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import ErrorCode
    from wire.messages import (
        CancelInput,
        EntrantStatus,
        EntrantView,
        LeaveResult,
        MoneyMove,
        PayEntryInput,
        RegisterInput,
        RegisterResult,
        TournamentPhase,
        TournamentView,
        UnregisterInput,
    )
    from wire.refusals import passed_on
    from workflows import effects
    from workflows.alarm import Alarm
    from workflows.budget import run_budget_spent
    from workflows.errors import refuse
    from workflows.inbox import Inbox
    from workflows.tournament.books import Books
    from workflows.tournament.entries import Entries


class LatePlay(Protocol):
    """What late registration asks of play (``Play``; the parts never import each other)."""

    async def seat_late(self, entrant: EntrantView) -> None: ...

    async def close_late(self) -> None: ...

    def at_rest(self) -> bool: ...


LATE_HANDOVER_PATCH = "late-handover-v1"
"""Late registration hands its run over to a fresh one when the run's budget is spent
(``Registration.hand_over``); before it, a run in the window never continued-as-new."""
REGISTRATION_LOOP_PATCH = "registration-loop-v1"
"""Registration's Updates served by its loop (before it, by their handlers under a lock:
workflows/tournament/registration_legacy.py)."""


class Registration:
    """Registration's Updates are served by its loop (workflows/inbox.py, docs/durability.md
    rule 1): a handler validates, leaves its request and waits; the loop alone moves money,
    writes rows, arms reserve alarms and answers, one request at a time.

    A fee's money move is the one exception to "one at a time": a chain round trip can take
    minutes (an RPC outage), and others must go on registering and leaving meanwhile
    (security review H1). The loop starts the move and goes on; the move's outcome is an input
    the loop takes at its next wait. While any fee is moving, fired reserve alarms and an
    operator's cancel wait: so a payment's outcome and a reserve's expiry never race, and the
    order of the commands does not depend on how the worker batched the two (the merged-task
    test, tests/integration/test_interleavings.py, failed on the handler-and-lock design on
    exactly that: a reserve armed after a register's rows, merged with another's expiry).
    """

    def __init__(self, books: Books, entries: Entries) -> None:
        self.books = books
        self.entries = entries
        self.inbox = Inbox()
        self.collected: list[tuple[int, str, ActivityError | None]] = []
        """Fee moves that finished, in the order Temporal reported them: (request, player,
        error)."""
        self.parked_cancel: list[tuple[int, CancelInput]] = []
        self.alarms: dict[tuple[str, int], Alarm] = {}
        self.expired: list[tuple[str, int]] = []
        """Reserves whose alarm fired, in firing order (the loop takes one per turn)."""
        self.fee_moves: list[asyncio.Task[None]] = []
        self.start_alarm: Alarm | None = None
        """An MTT's ``scheduledStartAt`` (a Sit-and-Go has none and arms no timer)."""
        self.start_taken = False
        self.play: LatePlay | None = None
        """Play, while late registration runs beside it (``run_late``)."""

    def fees_moving(self) -> bool:
        return any(e.paying for e in self.books.s.entrants.values())

    async def run(self) -> None:
        """Until every seat is paid (seal) or an operator cancels; expire unpaid reserves.

        Each reserve gets its own alarm when its register is served (or, after a
        continue-as-new, when the run starts); a reserve expires when its alarm fired and it
        is still unpaid, never by comparing the clock with its ``reservedUntil``.
        """
        b = self.books
        if b.settings.scheduled_start_at is not None:
            self.start_alarm = await Alarm.until(b.settings.scheduled_start_at, "scheduled start")
        for e in list(b.s.entrants.values()):
            if e.status is EntrantStatus.RESERVED:
                await self.arm_reserve(e)
        while b.s.phase is TournamentPhase.REGISTERING:
            await self.turn(draining=False)
            if b.s.phase is TournamentPhase.REGISTERING and run_budget_spent(
                b.updates_this_run, b.inp.updates_per_run
            ):
                # New Updates are refused (503, retry) while the ones in flight are served,
                # so the hand-over cannot be starved; the next run re-arms every reserve.
                b.draining = True
                while (
                    b.s.phase is TournamentPhase.REGISTERING
                    and not workflow.all_handlers_finished()
                ):
                    await self.turn(draining=True)
                if b.s.phase is TournamentPhase.REGISTERING:
                    self.cancel_alarms()
                    workflow.continue_as_new(b.carried())
                b.draining = False
        self.cancel_alarms()
        # Requests left when the field sealed or the operator cancelled are refused by the
        # same checks (the phase), so no handler waits for ever.
        for number, request in [*self.parked_cancel, *self.inbox.take()]:
            await self.serve(number, request)
        self.parked_cancel.clear()

    async def turn(self, *, draining: bool) -> None:
        """Wait for an input, then take one, the first of: the oldest request, the oldest
        fee outcome, and (when no fee is moving) a parked cancel, then the reserve whose
        alarm fired first.

        One per turn, chosen afresh each time: an input that came while the loop was busy
        with the last one is weighed against the others at the same point whether it reached
        the worker in the same task or the next, so the commands do not depend on how the
        inputs were batched (docs/durability.md, rule 3).
        """
        b = self.books

        def ready() -> bool:
            if self.inbox or self.collected:
                return True
            if b.s.phase is not TournamentPhase.REGISTERING:
                return True
            if draining and workflow.all_handlers_finished():
                return True
            if self.start_due() and not self.start_taken and not self.fees_moving():
                return True
            return not self.fees_moving() and (bool(self.parked_cancel) or bool(self.expired))

        await workflow.wait_condition(ready)
        if self.inbox:
            await self.serve(*self.inbox.take_one())
        elif self.collected:
            await self.finish_payment(*self.collected.pop(0))
        elif self.fees_moving():
            return
        elif self.parked_cancel:
            await self.serve(*self.parked_cancel.pop(0))
        elif self.expired:
            key = self.expired.pop(0)
            self.alarms.pop(key, None)
            await self.entries.release_reserves({key})
        if (
            b.s.phase is TournamentPhase.REGISTERING
            and b.count(EntrantStatus.PAID) == b.settings.field_bound
        ):
            await self.entries.seal()
        elif (
            b.s.phase is TournamentPhase.REGISTERING and self.start_due() and not self.fees_moving()
        ):
            self.start_taken = True
            await self.scheduled_seal()

    async def run_late(self, play: LatePlay) -> None:
        """An MTT's late registration, beside play (``lateRegistrationSeconds``): the same
        requests served the same way, until the close's durable timer fires at
        ``playStart + lateRegistrationSeconds`` (workflow time), or the tournament ends
        first. A paid late entry is seated at once (``Play.seat_late``). The close waits for
        any fee in flight, as the scheduled start does; then unpaid reserves are released
        and play places the busts it held (``Play.close_late``). After a close by the end, a
        fee still moving is refunded when it lands."""
        b = self.books
        late = b.s.late
        assert late is not None
        self.play = play
        b.late_running = True
        close = await Alarm.until(late.closes_at_ms, "late registration close")
        for e in list(b.s.entrants.values()):
            if e.status is EntrantStatus.RESERVED:
                await self.arm_reserve(e)

        def ready() -> bool:
            if self.inbox or self.collected:
                return True
            if self.fees_moving():
                return False
            return not late.open or close.fired or bool(self.expired)

        while late.open or self.fees_moving() or self.collected or self.inbox:
            await workflow.wait_condition(ready)
            if self.inbox:
                await self.serve(*self.inbox.take_one())
            elif self.collected:
                await self.finish_payment(*self.collected.pop(0))
            elif not late.open:
                continue
            elif close.fired:
                await self.release_unpaid()
                await play.close_late()
            elif self.expired:
                key = self.expired.pop(0)
                self.alarms.pop(key, None)
                await self.entries.release_reserves({key})
            if (
                late.open
                and run_budget_spent(b.updates_this_run, b.inp.updates_per_run)
                and workflow.patched(LATE_HANDOVER_PATCH)
            ):
                await self.hand_over(close)
        close.cancel()
        self.cancel_alarms()
        await self.release_unpaid()
        for number, request in self.inbox.take():
            await self.serve(number, request)
        b.late_running = False

    async def hand_over(self, close: Alarm) -> None:
        """The run's budget is spent while late registration is open (its Updates, or the
        events play adds beside it): new Updates are refused (``temporarily_unavailable``,
        retry) while the ones in flight are served and any fee lands; once play rests at a
        hand boundary with nothing to take (``LatePlay.at_rest``), a fresh run takes over
        with the books, the window still open. The fresh run arms the close and the reserves
        again from the books (a deadline already past fires at once): a 10,000-entrant
        window is many runs, none near Temporal's 2,000 Updates (docs/mtt.md)."""
        b = self.books
        play = self.play
        assert play is not None  # set by run_late
        b.draining = True

        def settled() -> bool:
            if self.inbox or self.collected:
                return True
            return workflow.all_handlers_finished() and not self.fees_moving() and play.at_rest()

        while True:
            await workflow.wait_condition(settled)
            if self.inbox:
                await self.serve(*self.inbox.take_one())
            elif self.collected:
                await self.finish_payment(*self.collected.pop(0))
            else:
                break
        close.cancel()
        self.cancel_alarms()
        # ``carried``: the state with the players whose part this run has not published,
        # as every other hand-over of the tournament carries it.
        workflow.continue_as_new(b.carried())

    async def release_unpaid(self) -> None:
        unpaid = {
            (e.player_id, e.entry_no)
            for e in self.books.s.entrants.values()
            if e.status is EntrantStatus.RESERVED and not e.paying
        }
        if unpaid:
            await self.entries.release_reserves(unpaid)

    def start_due(self) -> bool:
        return self.start_alarm is not None and self.start_alarm.fired

    async def scheduled_seal(self) -> None:
        """An MTT's scheduled start has come (docs/mtt.md): with at least ``minEntrants``
        paid, unpaid reserves are released and the field seals; with fewer, registration goes
        on and the field seals as soon as ``minEntrants`` have paid."""
        b = self.books
        if b.count(EntrantStatus.PAID) < b.settings.field_minimum:
            return
        unpaid = {
            (e.player_id, e.entry_no)
            for e in b.s.entrants.values()
            if e.status is EntrantStatus.RESERVED
        }
        if unpaid:
            await self.entries.release_reserves(unpaid)
        await self.entries.seal()

    async def serve(self, number: int, request: object) -> None:
        """Answer one request (a coded refusal is an answer); a fee's answer comes later."""
        answer: object
        try:
            if isinstance(request, RegisterInput):
                answer = await self.take_register(request)
            elif isinstance(request, PayEntryInput):
                paid = await self.take_pay(number, request)
                if paid is None:
                    return  # the fee is moving: finish_payment answers
                answer = paid
            elif isinstance(request, UnregisterInput):
                answer = await self.take_unregister(request)
            elif isinstance(request, CancelInput):
                if self.fees_moving() and self.books.s.phase is TournamentPhase.REGISTERING:
                    # A fee in flight lands first, so it is refunded with the others.
                    self.entries.verify_cancel()
                    self.parked_cancel.append((number, request))
                    return
                answer = await self.take_cancel(request)
            else:  # pragma: no cover - the handlers below are the only askers
                raise AssertionError(f"unknown registration request {request!r}")
        except ApplicationError as err:
            answer = err
        except ActivityError as err:
            # A money move refused for good (a refund the chain reverts): this request fails,
            # not the tournament.
            cause = err.cause
            answer = passed_on(cause) if isinstance(cause, ApplicationError) and cause.type else err
        await self.inbox.deliver(number, answer)

    async def arm_reserve(self, entrant: EntrantView) -> None:
        key = (entrant.player_id, entrant.entry_no)
        if key not in self.alarms and not entrant.paying:
            assert entrant.reserved_until_ms is not None
            self.alarms[key] = await Alarm.until(
                entrant.reserved_until_ms,
                f"reserve of {entrant.player_id}",
                on_fire=lambda: self.expired.append(key),
            )

    def cancel_alarms(self) -> None:
        if self.start_alarm is not None:
            self.start_alarm.cancel()
        for alarm in self.alarms.values():
            alarm.cancel()
        self.alarms.clear()
        self.expired.clear()

    def refuse_while_draining(self) -> None:
        if self.books.draining:
            raise refuse(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the tournament is moving to a fresh run; send this again in a moment",
            )

    def refuse_while_cancelling(self) -> None:
        if self.parked_cancel:
            raise refuse(
                ErrorCode.INVALID_STATE, "the tournament is being cancelled by an operator"
            )

    # -- register ------------------------------------------------------------------------
    async def register(self, req: RegisterInput) -> RegisterResult:
        result: RegisterResult = await self.inbox.ask(req)
        return result

    def validate_register(self, req: RegisterInput) -> None:
        self.refuse_while_draining()
        self.refuse_while_cancelling()
        self.entries.verify_register(req, clock=True)

    async def take_register(self, req: RegisterInput) -> RegisterResult:
        self.refuse_while_cancelling()
        self.entries.verify_register(req, clock=False)
        entrant = await self.entries.reserve(req)
        await self.arm_reserve(entrant)
        return self.entries.reserved_answer(entrant)

    # -- pay_entry -----------------------------------------------------------------------
    async def pay_entry(self, req: PayEntryInput) -> RegisterResult:
        """Collect the fee. The loop marks the entry ``paying`` and starts the money move,
        then goes on serving others while it runs: a chain round trip that takes minutes (an
        RPC outage) must not stop others registering or leaving (security review H1)."""
        s = self.books.s
        if s.phase is not TournamentPhase.REGISTERING and self.entries.already_paid(req):
            # A retry after the field sealed (its answer was lost): the same answer, and no
            # loop is left to ask. It issues no command.
            return self.entries.paid_answer(s.entrants[req.player_id])
        result: RegisterResult = await self.inbox.ask(req)
        return result

    def validate_pay(self, req: PayEntryInput) -> None:
        self.refuse_while_draining()
        self.refuse_while_cancelling()
        if not self.entries.already_paid(req):
            self.entries.verify_pay(req)
            self.entries.verify_reserve_alive(req)

    async def take_pay(self, number: int, req: PayEntryInput) -> RegisterResult | None:
        if self.entries.already_paid(req):
            return self.entries.paid_answer(self.books.s.entrants[req.player_id])
        self.refuse_while_cancelling()
        self.entries.verify_pay(req)
        move = self.entries.fee_move(req)
        entrant = self.books.s.entrants[req.player_id]
        entrant.paying = True
        entrant.wallet = req.permit.owner if req.permit else None  # one entrant per wallet
        self.books.bump()
        self.fee_moves.append(asyncio.ensure_future(self.collect(number, req.player_id, move)))
        await asyncio.sleep(0)  # the move's task runs now: its activity is scheduled here
        return None

    async def collect(self, number: int, player_id: str, move: MoneyMove) -> None:
        """The fee's money move alone; its outcome is the loop's to record (no command here
        after the activity)."""
        outcome: ActivityError | None = None
        try:
            await effects.collect_entry(move, bound=self.books.money_ids)
        except ActivityError as err:
            outcome = err
        self.collected.append((number, player_id, outcome))

    async def finish_payment(
        self, number: int, player_id: str, error: ActivityError | None
    ) -> None:
        b = self.books
        entrant = b.s.entrants[player_id]
        entrant.paying = False
        answer: object
        if error is not None:
            # A definite refusal (insufficient funds): nothing moved, the reserve stands.
            entrant.wallet = None
            b.bump()
            cause = error.cause
            answer = (
                passed_on(cause) if isinstance(cause, ApplicationError) and cause.type else error
            )
        else:
            entrant.status = EntrantStatus.PAID
            entrant.reserved_until_ms = None
            self.entries.record_paid(entrant)
            refused = None
            if b.s.late is not None and b.s.phase is not TournamentPhase.REGISTERING:
                refused = await self.finish_late_payment(entrant)
            b.bump()
            await b.save_entrant(entrant)
            await b.save_tournament()
            answer = refused or self.entries.paid_answer(entrant)
        await self.inbox.deliver(number, answer)

    async def finish_late_payment(self, entrant: EntrantView) -> ApplicationError | None:
        """A fee paid during late registration: the entry is seated now. One that lands
        after the close (the tournament ended while it moved) is refunded instead, and the
        refusal is the answer."""
        if self.entries.late_open():
            assert self.play is not None
            await self.play.seat_late(entrant)
            return None
        await self.entries.refund(entrant)
        entrant.status = EntrantStatus.RELEASED
        return refuse(
            ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
            "late registration closed while your fee was moving: it was refunded",
        )

    # -- unregister ----------------------------------------------------------------------
    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        result: LeaveResult = await self.inbox.ask(req)
        return result

    def validate_unregister(self, req: UnregisterInput) -> None:
        self.refuse_while_draining()
        self.entries.verify_unregister(req)

    async def take_unregister(self, req: UnregisterInput) -> LeaveResult:
        self.entries.verify_unregister(req)
        return await self.entries.leave(req)

    # -- cancel --------------------------------------------------------------------------
    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`.
        A fee in flight lands first (the loop parks the cancel until then), so it is refunded
        with the others."""
        result: TournamentView = await self.inbox.ask(req)
        return result

    def validate_cancel(self, _req: CancelInput) -> None:
        self.refuse_while_draining()
        self.refuse_while_cancelling()
        self.entries.verify_cancel()

    async def take_cancel(self, req: CancelInput) -> TournamentView:
        self.entries.verify_cancel()
        return await self.entries.cancel(req)
