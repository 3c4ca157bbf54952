"""Registration as it ran before its loop served the Updates (patch ``registration-loop-v1``).

Kept as it was, so tournaments that started under it replay: their handlers awaited the money
moves and rows themselves, under one lock. It has the interface of
:class:`workflows.tournament.registration.Registration` (``run``, each Update and its
validator), and TournamentWorkflow chooses it once, at the start of a run that began before
the patch; a run that started with the patch never comes here. Retire it (docs/versioning.md)
once no tournament started before December 2026 can be open or replayed.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import ErrorCode
    from wire.messages import (
        CancelInput,
        EntrantStatus,
        LeaveResult,
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
    from workflows.tournament.books import Books
    from workflows.tournament.entries import Entries


class LegacyRegistration:
    def __init__(self, books: Books, entries: Entries) -> None:
        self.books = books
        self.entries = entries
        self.lock = asyncio.Lock()

    async def run(self) -> None:
        """Until every seat is paid (seal) or an operator cancels; expire unpaid reserves.

        Each reserve gets its own alarm when the loop first sees it; a reserve expires when
        its alarm fired and it is still unpaid, never by comparing the clock with its
        ``reservedUntil`` (docs/durability.md).
        """
        b = self.books
        alarms: dict[tuple[str, int], Alarm] = {}
        while b.s.phase is TournamentPhase.REGISTERING:
            # A snapshot: arming an alarm yields, and a register handler may add an entrant
            # meanwhile (it gets its alarm on the next turn of the loop).
            for e in list(b.s.entrants.values()):
                key = (e.player_id, e.entry_no)
                if e.status is EntrantStatus.RESERVED and not e.paying and key not in alarms:
                    assert e.reserved_until_ms is not None
                    alarms[key] = await Alarm.until(
                        e.reserved_until_ms, f"reserve of {e.player_id}"
                    )
            version = b.s.version
            await workflow.wait_condition(
                lambda version=version: (  # type: ignore[misc]
                    b.s.version != version
                    or b.s.phase is not TournamentPhase.REGISTERING
                    or any(a.fired for a in alarms.values())
                )
            )
            async with self.lock:
                fired = {key for key, alarm in alarms.items() if alarm.fired}
                for key in fired:
                    del alarms[key]
                await self.entries.release_reserves(fired)
                if (
                    b.s.phase is TournamentPhase.REGISTERING
                    and b.count(EntrantStatus.PAID) == b.settings.field_bound
                ):
                    await self.entries.seal()
            if b.s.phase is TournamentPhase.REGISTERING and run_budget_spent(
                b.updates_this_run, b.inp.updates_per_run
            ):
                # New Updates are refused (503, retry) while the ones in flight finish, so
                # the hand-over cannot be starved; the next run re-arms every reserve's alarm.
                b.draining = True
                await workflow.wait_condition(workflow.all_handlers_finished)
                if b.s.phase is TournamentPhase.REGISTERING:
                    for alarm in alarms.values():
                        alarm.cancel()
                    workflow.continue_as_new(b.carried())
                b.draining = False
        for alarm in alarms.values():
            alarm.cancel()

    def refuse_while_draining(self) -> None:
        if self.books.draining:
            raise refuse(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the tournament is moving to a fresh run; send this again in a moment",
            )

    async def register(self, req: RegisterInput) -> RegisterResult:
        await workflow.wait_condition(lambda: self.books.row_saved)
        async with self.lock:
            self.entries.verify_register(req, clock=True)
            entrant = await self.entries.reserve(req)
            return self.entries.reserved_answer(entrant)

    def validate_register(self, req: RegisterInput) -> None:
        self.refuse_while_draining()
        self.entries.verify_register(req, clock=True)

    async def pay_entry(self, req: PayEntryInput) -> RegisterResult:
        """Collect the fee. The lock is held to check and mark the entry ``paying`` and to
        record the result, never across the money move itself: a chain round trip that takes
        minutes (an RPC outage) must not stop others registering, leaving or being released
        (security review H1)."""
        b = self.books
        async with self.lock:
            if self.entries.already_paid(req):
                return self.entries.paid_answer(b.s.entrants[req.player_id])
            self.entries.verify_pay(req)
            move = self.entries.fee_move(req)
            entrant = b.s.entrants[req.player_id]
            entrant.paying = True
            entrant.wallet = req.permit.owner if req.permit else None  # one entrant per wallet
            b.bump()
        try:
            await effects.collect_entry(move, bound=self.books.money_ids)
        except ActivityError as err:
            async with self.lock:
                # A definite refusal (insufficient funds): nothing moved, the reserve stands.
                entrant.paying = False
                entrant.wallet = None
                b.bump()
            if isinstance(err.cause, ApplicationError) and err.cause.type:
                raise passed_on(err.cause) from None
            raise
        async with self.lock:
            entrant.paying = False
            entrant.status = EntrantStatus.PAID
            entrant.reserved_until_ms = None
            self.entries.record_paid(entrant)
            b.bump()
            await b.save_entrant(entrant)
            await b.save_tournament()
            return self.entries.paid_answer(entrant)

    def validate_pay(self, req: PayEntryInput) -> None:
        self.refuse_while_draining()
        if not self.entries.already_paid(req):
            self.entries.verify_pay(req)
            self.entries.verify_reserve_alive(req)

    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        async with self.lock:
            self.entries.verify_unregister(req)
            return await self.entries.leave(req)

    def validate_unregister(self, req: UnregisterInput) -> None:
        self.refuse_while_draining()
        self.entries.verify_unregister(req)

    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`."""
        s = self.books.s
        while True:
            # A payment in flight finishes first (it releases the lock while the money moves),
            # so its fee is refunded with the others.
            await workflow.wait_condition(lambda: not any(e.paying for e in s.entrants.values()))
            await self.lock.acquire()
            if not any(e.paying for e in s.entrants.values()):
                break
            self.lock.release()
        try:
            self.entries.verify_cancel()
            return await self.entries.cancel(req)
        finally:
            self.lock.release()

    def validate_cancel(self, _req: CancelInput) -> None:
        self.refuse_while_draining()
        self.entries.verify_cancel()
