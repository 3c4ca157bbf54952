"""Registration as it ran before its loop served the Updates (patch ``registration-loop-v1``).

Kept exactly as it was, so tournaments that started under it replay: their handlers awaited
the money moves and rows themselves, under one lock. A run that started with the patch never
comes here. Retire it (docs/versioning.md) once no tournament started before December 2026 can
be open or replayed.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
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
    from workflows.tournament_entries import Entries


class LegacyRegistrationMixin(Entries):
    lock: asyncio.Lock

    async def _legacy_registration(self) -> None:
        """Until every seat is paid (seal) or an operator cancels; expire unpaid reserves.

        Each reserve gets its own alarm when the loop first sees it; a reserve expires when
        its alarm fired and it is still unpaid, never by comparing the clock with its
        ``reservedUntil`` (docs/durability.md).
        """
        alarms: dict[tuple[str, int], Alarm] = {}
        while self.s.phase is TournamentPhase.REGISTERING:
            # A snapshot: arming an alarm yields, and a register handler may add an entrant
            # meanwhile (it gets its alarm on the next turn of the loop).
            for e in list(self.s.entrants.values()):
                key = (e.player_id, e.entry_no)
                if e.status is EntrantStatus.RESERVED and not e.paying and key not in alarms:
                    assert e.reserved_until_ms is not None
                    alarms[key] = await Alarm.until(
                        e.reserved_until_ms, f"reserve of {e.player_id}"
                    )
            version = self.s.version
            await workflow.wait_condition(
                lambda version=version: (  # type: ignore[misc]
                    self.s.version != version
                    or self.s.phase is not TournamentPhase.REGISTERING
                    or any(a.fired for a in alarms.values())
                )
            )
            async with self.lock:
                fired = {key for key, alarm in alarms.items() if alarm.fired}
                for key in fired:
                    del alarms[key]
                await self._release_reserves(fired)
                if (
                    self.s.phase is TournamentPhase.REGISTERING
                    and self._count(EntrantStatus.PAID) == self.settings.seats
                ):
                    await self._seal()
            if self.s.phase is TournamentPhase.REGISTERING and run_budget_spent(
                self.updates_this_run, self.inp.updates_per_run
            ):
                # New Updates are refused (503, retry) while the ones in flight finish, so
                # the hand-over cannot be starved; the next run re-arms every reserve's alarm.
                self.draining = True
                await workflow.wait_condition(workflow.all_handlers_finished)
                if self.s.phase is TournamentPhase.REGISTERING:
                    for alarm in alarms.values():
                        alarm.cancel()
                    workflow.continue_as_new(self.inp.model_copy(update={"carry": self.s}))
                self.draining = False
        for alarm in alarms.values():
            alarm.cancel()

    async def _legacy_register(self, req: RegisterInput) -> RegisterResult:
        await workflow.wait_condition(lambda: self.row_saved)
        async with self.lock:
            self._recheck(lambda r: self._verify_register(r, clock=True), req)
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
            return RegisterResult(
                status=EntrantStatus.RESERVED,
                owner_user_id=req.owner_user_id,
                reserved_until_ms=until,
                version=self.s.version,
            )

    async def _legacy_pay_entry(self, req: PayEntryInput) -> RegisterResult:
        """Collect the fee. The lock is held to check and mark the entry ``paying`` and to
        record the result, never across the money move itself: a chain round trip that takes
        minutes (an RPC outage) must not stop others registering, leaving or being released
        (security review H1)."""
        async with self.lock:
            if self._already_paid(req):
                return self._paid_answer(self.s.entrants[req.player_id])
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
        try:
            await effects.collect_entry(move)
        except ActivityError as err:
            async with self.lock:
                # A definite refusal (insufficient funds): nothing moved, the reserve stands.
                entrant.paying = False
                entrant.wallet = None
                self._bump()
            if isinstance(err.cause, ApplicationError) and err.cause.type:
                raise passed_on(err.cause) from None
            raise
        async with self.lock:
            entrant.paying = False
            entrant.status = EntrantStatus.PAID
            entrant.reserved_until_ms = None
            self._bump()
            await self._save_entrant(entrant)
            await self._save_tournament()
            return self._paid_answer(entrant)

    async def _legacy_unregister(self, req: UnregisterInput) -> LeaveResult:
        async with self.lock:
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
            return LeaveResult(
                status=EntrantStatus.RELEASED, refunded=refunded, version=self.s.version
            )

    async def _legacy_cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`."""
        while True:
            # A payment in flight finishes first (it releases the lock while the money moves),
            # so its fee is refunded with the others.
            await workflow.wait_condition(
                lambda: not any(e.paying for e in self.s.entrants.values())
            )
            await self.lock.acquire()
            if not any(e.paying for e in self.s.entrants.values()):
                break
            self.lock.release()
        try:
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
        finally:
            self.lock.release()
