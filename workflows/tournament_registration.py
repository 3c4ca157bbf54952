"""Registration: reserve, pay exactly the fee, leave with a refund, cancel; unpaid reserves
expire after 120 s. Part of TournamentWorkflow (workflows/tournament.py)."""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import ErrorCode
    from wire.events import TournamentStateChanged
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
    from workflows.tournament_registration_legacy import LegacyRegistrationMixin

REGISTRATION_LOOP_PATCH = "registration-loop-v1"
"""Registration's Updates served by its loop (before it, by their handlers under a lock:
workflows/tournament_registration_legacy.py)."""


class RegistrationMixin(LegacyRegistrationMixin):
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

    inbox: Inbox
    collected: list[tuple[int, str, ActivityError | None]]
    """Fee moves that finished, in the order Temporal reported them: (request, player, error)."""
    parked_cancel: list[tuple[int, CancelInput]]
    alarms: dict[tuple[str, int], Alarm]
    expired: list[tuple[str, int]]
    """Reserves whose alarm fired, in firing order (the loop takes one per turn)."""
    fee_moves: list[asyncio.Task[None]]
    by_loop: bool
    """Set by the run's first step (the patch): False for a run that began before it."""

    def _fees_moving(self) -> bool:
        return any(e.paying for e in self.s.entrants.values())

    async def _registration(self) -> None:
        """Until every seat is paid (seal) or an operator cancels; expire unpaid reserves.

        Each reserve gets its own alarm when its register is served (or, after a
        continue-as-new, when the run starts); a reserve expires when its alarm fired and it
        is still unpaid, never by comparing the clock with its ``reservedUntil``.
        """
        if not self.by_loop:
            await self._legacy_registration()
            return
        for e in list(self.s.entrants.values()):
            if e.status is EntrantStatus.RESERVED:
                await self._arm_reserve(e)
        while self.s.phase is TournamentPhase.REGISTERING:
            await self._registration_turn(draining=False)
            if self.s.phase is TournamentPhase.REGISTERING and run_budget_spent(
                self.updates_this_run, self.inp.updates_per_run
            ):
                # New Updates are refused (503, retry) while the ones in flight are served,
                # so the hand-over cannot be starved; the next run re-arms every reserve.
                self.draining = True
                while (
                    self.s.phase is TournamentPhase.REGISTERING
                    and not workflow.all_handlers_finished()
                ):
                    await self._registration_turn(draining=True)
                if self.s.phase is TournamentPhase.REGISTERING:
                    self._cancel_alarms()
                    workflow.continue_as_new(self.inp.model_copy(update={"carry": self.s}))
                self.draining = False
        self._cancel_alarms()
        # Requests left when the field sealed or the operator cancelled are refused by the
        # same checks (the phase), so no handler waits for ever.
        for number, request in [*self.parked_cancel, *self.inbox.take()]:
            await self._serve_registration(number, request)
        self.parked_cancel.clear()

    async def _registration_turn(self, *, draining: bool) -> None:
        """Wait for an input, then take one, the first of: the oldest request, the oldest
        fee outcome, and (when no fee is moving) a parked cancel, then the reserve whose
        alarm fired first.

        One per turn, chosen afresh each time: an input that came while the loop was busy
        with the last one is weighed against the others at the same point whether it reached
        the worker in the same task or the next, so the commands do not depend on how the
        inputs were batched (docs/durability.md, rule 3).
        """

        def ready() -> bool:
            if self.inbox or self.collected:
                return True
            if self.s.phase is not TournamentPhase.REGISTERING:
                return True
            if draining and workflow.all_handlers_finished():
                return True
            return not self._fees_moving() and (bool(self.parked_cancel) or bool(self.expired))

        await workflow.wait_condition(ready)
        if self.inbox:
            await self._serve_registration(*self.inbox.take_one())
        elif self.collected:
            await self._finish_payment(*self.collected.pop(0))
        elif self._fees_moving():
            return
        elif self.parked_cancel:
            await self._serve_registration(*self.parked_cancel.pop(0))
        elif self.expired:
            key = self.expired.pop(0)
            self.alarms.pop(key, None)
            await self._release_reserves({key})
        if (
            self.s.phase is TournamentPhase.REGISTERING
            and self._count(EntrantStatus.PAID) == self.settings.seats
        ):
            await self._seal()

    async def _serve_registration(self, number: int, request: object) -> None:
        """Answer one request (a coded refusal is an answer); a fee's answer comes later."""
        answer: object
        try:
            if isinstance(request, RegisterInput):
                answer = await self._take_register(request)
            elif isinstance(request, PayEntryInput):
                paid = await self._take_pay(number, request)
                if paid is None:
                    return  # the fee is moving: _finish_payment answers
                answer = paid
            elif isinstance(request, UnregisterInput):
                answer = await self._take_unregister(request)
            elif isinstance(request, CancelInput):
                if self._fees_moving() and self.s.phase is TournamentPhase.REGISTERING:
                    # A fee in flight lands first, so it is refunded with the others.
                    self._recheck(self._verify_cancel, request)
                    self.parked_cancel.append((number, request))
                    return
                answer = await self._take_cancel(request)
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

    async def _arm_reserve(self, entrant: EntrantView) -> None:
        key = (entrant.player_id, entrant.entry_no)
        if key not in self.alarms and not entrant.paying:
            assert entrant.reserved_until_ms is not None
            self.alarms[key] = await Alarm.until(
                entrant.reserved_until_ms,
                f"reserve of {entrant.player_id}",
                on_fire=lambda: self.expired.append(key),
            )

    def _cancel_alarms(self) -> None:
        for alarm in self.alarms.values():
            alarm.cancel()
        self.alarms.clear()
        self.expired.clear()

    def _refuse_while_draining(self) -> None:
        if self.draining:
            raise refuse(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the tournament is moving to a fresh run; send this again in a moment",
            )

    def _refuse_while_cancelling(self) -> None:
        if self.parked_cancel:
            raise refuse(
                ErrorCode.INVALID_STATE, "the tournament is being cancelled by an operator"
            )

    @workflow.update
    async def register(self, req: RegisterInput) -> RegisterResult:
        self.updates_this_run += 1
        if not self.by_loop:
            return await self._legacy_register(req)
        result: RegisterResult = await self.inbox.ask(req)
        return result

    async def _take_register(self, req: RegisterInput) -> RegisterResult:
        self._refuse_while_cancelling()
        self._recheck(lambda r: self._verify_register(r, clock=False), req)
        previous = self.s.entrants.get(req.player_id)
        until = self._now_ms() + self.inp.reserve_seconds * 1000
        entrant = EntrantView(
            player_id=req.player_id,
            owner_user_id=req.owner_user_id,
            is_agent=req.is_agent,
            status=EntrantStatus.RESERVED,
            reserved_until_ms=until,
            advisor_agent_id=req.advisor_agent_id,
            entry_no=(previous.entry_no + 1) if previous else 1,
        )
        self.s.entrants[req.player_id] = entrant
        self._bump()
        await self._save_entrant(entrant)
        await self._save_tournament()
        await self._arm_reserve(entrant)
        return RegisterResult(
            status=EntrantStatus.RESERVED,
            owner_user_id=req.owner_user_id,
            reserved_until_ms=until,
            version=self.s.version,
        )

    @register.validator
    def _validate_register(self, req: RegisterInput) -> None:
        self._refuse_while_draining()
        self._refuse_while_cancelling()
        self._recheck(lambda r: self._verify_register(r, clock=True), req)

    @workflow.update
    async def pay_entry(self, req: PayEntryInput) -> RegisterResult:
        """Collect the fee. The loop marks the entry ``paying`` and starts the money move,
        then goes on serving others while it runs: a chain round trip that takes minutes (an
        RPC outage) must not stop others registering or leaving (security review H1)."""
        self.updates_this_run += 1
        if not self.by_loop:
            return await self._legacy_pay_entry(req)
        if self.s.phase is not TournamentPhase.REGISTERING and self._already_paid(req):
            # A retry after the field sealed (its answer was lost): the same answer, and no
            # loop is left to ask. It issues no command.
            return self._paid_answer(self.s.entrants[req.player_id])
        result: RegisterResult = await self.inbox.ask(req)
        return result

    async def _take_pay(self, number: int, req: PayEntryInput) -> RegisterResult | None:
        if self._already_paid(req):
            return self._paid_answer(self.s.entrants[req.player_id])
        self._refuse_while_cancelling()
        self._recheck(self._verify_pay, req)
        entrant = self.s.entrants[req.player_id]
        move = MoneyMove(
            key=self._entry_key(entrant),
            tournament_id=self.s.tournament_id,
            player_id=req.player_id,
            owner_user_id=entrant.owner_user_id,
            amount=self.settings.entry_fee,
            permit=req.permit,
        )
        entrant.paying = True
        entrant.wallet = req.permit.owner if req.permit else None  # one entrant per wallet
        self._bump()
        self.fee_moves.append(asyncio.ensure_future(self._collect(number, req.player_id, move)))
        await asyncio.sleep(0)  # the move's task runs now: its activity is scheduled here
        return None

    async def _collect(self, number: int, player_id: str, move: MoneyMove) -> None:
        """The fee's money move alone; its outcome is the loop's to record (no command here
        after the activity)."""
        outcome: ActivityError | None = None
        try:
            await effects.collect_entry(move)
        except ActivityError as err:
            outcome = err
        self.collected.append((number, player_id, outcome))

    async def _finish_payment(
        self, number: int, player_id: str, error: ActivityError | None
    ) -> None:
        entrant = self.s.entrants[player_id]
        entrant.paying = False
        answer: object
        if error is not None:
            # A definite refusal (insufficient funds): nothing moved, the reserve stands.
            entrant.wallet = None
            self._bump()
            cause = error.cause
            answer = (
                passed_on(cause) if isinstance(cause, ApplicationError) and cause.type else error
            )
        else:
            entrant.status = EntrantStatus.PAID
            entrant.reserved_until_ms = None
            self._bump()
            await self._save_entrant(entrant)
            await self._save_tournament()
            answer = self._paid_answer(entrant)
        await self.inbox.deliver(number, answer)

    @pay_entry.validator
    def _validate_pay(self, req: PayEntryInput) -> None:
        self._refuse_while_draining()
        self._refuse_while_cancelling()
        if not self._already_paid(req):
            self._recheck(self._verify_pay, req)
            self._recheck(self._verify_reserve_alive, req)

    @workflow.update
    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        self.updates_this_run += 1
        if not self.by_loop:
            return await self._legacy_unregister(req)
        result: LeaveResult = await self.inbox.ask(req)
        return result

    async def _take_unregister(self, req: UnregisterInput) -> LeaveResult:
        self._recheck(self._verify_unregister, req)
        entrant = self.s.entrants[req.player_id]
        refunded = 0
        if entrant.status is EntrantStatus.PAID:
            refunded = await self._refund(entrant)
        entrant.status = EntrantStatus.RELEASED
        entrant.reserved_until_ms = None
        entrant.released_at_ms = self._now_ms()
        self._bump()
        await self._save_entrant(entrant)
        await self._save_tournament()
        return LeaveResult(status=EntrantStatus.RELEASED, refunded=refunded, version=self.s.version)

    @unregister.validator
    def _validate_unregister(self, req: UnregisterInput) -> None:
        self._refuse_while_draining()
        self._recheck(self._verify_unregister, req)

    @workflow.update
    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`.
        A fee in flight lands first (the loop parks the cancel until then), so it is refunded
        with the others."""
        self.updates_this_run += 1
        if not self.by_loop:
            return await self._legacy_cancel(req)
        result: TournamentView = await self.inbox.ask(req)
        return result

    async def _take_cancel(self, req: CancelInput) -> TournamentView:
        self._recheck(self._verify_cancel, req)
        for entrant in self.s.entrants.values():
            if entrant.status is EntrantStatus.PAID:
                await self._refund(entrant)
            if entrant.status is not EntrantStatus.RELEASED:
                entrant.status = EntrantStatus.RELEASED
                entrant.reserved_until_ms = None
                await self._save_entrant(entrant)
        self.s.phase = TournamentPhase.CANCELLED
        self._bump()
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "state:cancelled",
            TournamentStateChanged(state="cancelled", reason=req.reason),
        )
        await self._record_lifecycle()
        return self._view()

    @cancel.validator
    def _validate_cancel(self, req: CancelInput) -> None:
        self._refuse_while_draining()
        self._refuse_while_cancelling()
        self._recheck(self._verify_cancel, req)
