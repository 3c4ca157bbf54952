"""Registration: reserve, pay exactly the fee, leave with a refund, cancel; unpaid reserves
expire after 120 s. Part of TournamentWorkflow (workflows/tournament.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain import registration
    from domain.errors import DomainError, ErrorCode
    from wire.keys import entry_key, refund_key
    from wire.messages import (
        CancelInput,
        EntrantStatus,
        EntrantView,
        LeaveResult,
        LeaveVia,
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
    from workflows.tournament_base import TournamentBase

MAX_ENTRIES = 5
"""Registrations one player may make in one tournament (each leave and come back is one)."""
NO_STAND_UP = (TournamentPhase.PLAYING, TournamentPhase.ENDED, TournamentPhase.SETTLING)


class RegistrationMixin(TournamentBase):
    if TYPE_CHECKING:

        async def _seal(self) -> None: ...

    async def _registration(self) -> None:
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

    def _refuse_while_draining(self) -> None:
        if self.draining:
            raise refuse(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the tournament is moving to a fresh run; send this again in a moment",
            )

    @workflow.update
    async def register(self, req: RegisterInput) -> RegisterResult:
        self.updates_this_run += 1
        await workflow.wait_condition(lambda: self.row_saved)
        async with self.lock:
            self._recheck(self._verify_register, req)
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

    @register.validator
    def _validate_register(self, req: RegisterInput) -> None:
        self._refuse_while_draining()
        self._recheck(self._verify_register, req)

    def _verify_register(self, req: RegisterInput) -> None:
        self._verify_registering()
        current = self.s.entrants.get(req.player_id)
        if current is not None and current.status is not EntrantStatus.RELEASED:
            raise DomainError(
                ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "already registered for this tournament"
            )
        holder = next(
            (
                e
                for e in self.s.entrants.values()
                if e.owner_user_id == req.owner_user_id
                and e.player_id != req.player_id
                and e.status is not EntrantStatus.RELEASED
            ),
            None,
        )
        if holder is not None:
            # One entry per owner, whichever identity holds it (security review M2: an owner
            # with several agents held several seats at one table).
            raise DomainError(
                ErrorCode.TOURNAMENT_ALREADY_REGISTERED,
                f"your account already holds an entry here (as {holder.player_id})",
            )
        if current is not None and current.entry_no >= MAX_ENTRIES:
            raise DomainError(
                ErrorCode.TOURNAMENT_REGISTRATION_LIMIT,
                f"at most {MAX_ENTRIES} registrations per player in one tournament",
            )
        if current is not None and current.released_at_ms is not None and current.entry_no >= 2:
            # The first come-back is immediate (the seed's promise after an explicit
            # unregister); each later one waits the cooldown, doubling: 10 s, 20 s, 40 s.
            cooldown_ms = self.inp.reregister_cooldown_seconds * 1000 * 2 ** (current.entry_no - 2)
            wait_ms = current.released_at_ms + cooldown_ms - self._now_ms()
            if wait_ms > 0:
                seconds = -(-wait_ms // 1000)
                raise DomainError(
                    ErrorCode.TOURNAMENT_REGISTRATION_COOLDOWN,
                    f"you left this tournament just now: register again in {seconds} s",
                    retry_after_seconds=seconds,
                )
        registration.verify_seat_allowed(self.settings.kind, is_agent=req.is_agent)
        if req.advisor_agent_id is not None or self.settings.kind == "copilot":
            registration.verify_advisor(
                self.settings.kind,
                req.advisor_agent_id,
                advisor_owner_user_id=req.advisor_owner_user_id,
                advisor_skills=frozenset(req.advisor_skills),
                registrant_user_id=req.owner_user_id,
                advisors_in_use=frozenset(
                    e.advisor_agent_id
                    for e in self.s.entrants.values()
                    if e.advisor_agent_id and e.status is not EntrantStatus.RELEASED
                ),
            )
        registration.verify_capacity(self.settings.seats, self._taken())

    @workflow.update
    async def pay_entry(self, req: PayEntryInput) -> RegisterResult:
        """Collect the fee. The lock is held to check and mark the entry ``paying`` and to
        record the result, never across the money move itself: a chain round trip that takes
        minutes (an RPC outage) must not stop others registering, leaving or being released
        (security review H1)."""
        self.updates_this_run += 1
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

    @pay_entry.validator
    def _validate_pay(self, req: PayEntryInput) -> None:
        self._refuse_while_draining()
        if not self._already_paid(req):
            self._recheck(self._verify_pay, req)
            self._recheck(self._verify_reserve_alive, req)

    def _verify_reserve_alive(self, req: PayEntryInput) -> None:
        """A reserve past its time is gone, even before the loop's alarm releases it
        (security review L8). Checked in the validator only: replay never runs validators,
        so a pay that older code accepted at the boundary still replays."""
        entrant = self.s.entrants[req.player_id]
        until = entrant.reserved_until_ms
        expired = until is not None and self._now_ms() > until
        if entrant.status is EntrantStatus.RESERVED and expired:
            raise DomainError(
                ErrorCode.TOURNAMENT_NOT_REGISTERED,
                "your reserve expired: register again, then pay",
            )

    def _already_paid(self, req: PayEntryInput) -> bool:
        """A retry of a pay that went through (its answer was lost): the same answer again,
        and nothing moves. The fee must match, so a different call is still refused."""
        entrant = self.s.entrants.get(req.player_id)
        return (
            entrant is not None
            and entrant.status is EntrantStatus.PAID
            and req.amount == self.settings.entry_fee
        )

    def _paid_answer(self, entrant: EntrantView) -> RegisterResult:
        return RegisterResult(
            status=EntrantStatus.PAID, owner_user_id=entrant.owner_user_id, version=self.s.version
        )

    def _verify_pay(self, req: PayEntryInput) -> None:
        self._verify_registering()
        entrant = self._active_entrant(req.player_id)
        if entrant.status is EntrantStatus.PAID:
            raise DomainError(ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "the entry is already paid")
        if entrant.paying:
            raise DomainError(ErrorCode.INVALID_STATE, "a payment for this entry is in progress")
        if req.amount != self.settings.entry_fee:
            raise DomainError(
                ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH,
                f"the entry fee is exactly {self.settings.entry_fee}, not {req.amount}",
                field="amount",
            )
        if self.inp.money_backend == "chain":
            if req.permit is None:
                raise DomainError(
                    ErrorCode.VALIDATION_ERROR,
                    "an on-chain entry needs a signed permit for the vault",
                    field="permit",
                )
            if req.permit.value != self.settings.entry_fee:
                raise DomainError(
                    ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH,
                    f"the permit is for {req.permit.value}, the entry fee is "
                    f"{self.settings.entry_fee}",
                    field="permit.value",
                )
            owner = req.permit.owner.lower()
            if any(
                e.wallet is not None
                and e.wallet.lower() == owner
                and e.player_id != req.player_id
                and e.status is not EntrantStatus.RELEASED
                for e in self.s.entrants.values()
            ):
                # One wallet per active entrant: the vault holds deposits per (tournament,
                # wallet), so a second entrant naming a paid wallet would look paid for free
                # (security review C1).
                raise DomainError(
                    ErrorCode.VALIDATION_ERROR,
                    "this wallet already pays for another entrant of this tournament",
                    field="permit.owner",
                )

    @workflow.update
    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        self.updates_this_run += 1
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

    @unregister.validator
    def _validate_unregister(self, req: UnregisterInput) -> None:
        self._refuse_while_draining()
        self._recheck(self._verify_unregister, req)

    def _verify_unregister(self, req: UnregisterInput) -> None:
        if req.via is LeaveVia.STAND_UP and self.s.phase in NO_STAND_UP:
            raise DomainError(
                ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT,
                f"no standing up while the tournament is {self.s.phase.value}: play until you"
                " bust or win",
            )
        self._verify_registering()
        entrant = self._active_entrant(req.player_id)
        if entrant.paying:
            raise DomainError(
                ErrorCode.INVALID_STATE, "your payment is in progress: leave once it is done"
            )
        if req.via is LeaveVia.INTERNAL and entrant.status is EntrantStatus.PAID:
            raise DomainError(
                ErrorCode.PAID_REGISTRATION_USE_REFUND_PATH,
                "a paid entry is refunded through the refund path, not unregistered",
            )

    @workflow.update
    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`."""
        self.updates_this_run += 1
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
                "tournament_state_changed",
                "state:cancelled",
                {"state": "cancelled", "reason": req.reason},
            )
            await self._record_lifecycle()
            return self._view()
        finally:
            self.lock.release()

    @cancel.validator
    def _validate_cancel(self, req: CancelInput) -> None:
        self._refuse_while_draining()
        self._recheck(self._verify_cancel, req)

    def _verify_cancel(self, _req: CancelInput) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"only a registering tournament can be cancelled, not a {self.s.phase.value} one",
            )

    def _verify_registering(self) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
                f"tournament is {self.s.phase.value}, not registering",
            )

    def _active_entrant(self, player_id: str) -> EntrantView:
        entrant = self.s.entrants.get(player_id)
        if entrant is None or entrant.status is EntrantStatus.RELEASED:
            raise DomainError(ErrorCode.TOURNAMENT_NOT_REGISTERED, "not registered here")
        return entrant

    def _entry_key(self, entrant: EntrantView) -> str:
        """The idempotency key of this entry's fee: the vault records the deposit under it."""
        return entry_key(self.s.tournament_id, entrant.player_id, entrant.entry_no)

    async def _refund(self, entrant: EntrantView) -> int:
        move = MoneyMove(
            key=refund_key(self.s.tournament_id, entrant.player_id, entrant.entry_no),
            tournament_id=self.s.tournament_id,
            player_id=entrant.player_id,
            owner_user_id=entrant.owner_user_id,
            amount=self.settings.entry_fee,
            wallet=entrant.wallet,
            entry_key=self._entry_key(entrant),
        )
        await effects.refund_entry(move)
        return move.amount

    async def _release_reserves(self, due: set[tuple[str, int]]) -> None:
        """Release the reserves whose alarms fired, if they are still unpaid."""
        expired = [
            e
            for e in self.s.entrants.values()
            if e.status is EntrantStatus.RESERVED
            and not e.paying  # its fee is moving: the payment's outcome decides
            and (e.player_id, e.entry_no) in due
        ]
        for entrant in expired:
            entrant.status = EntrantStatus.RELEASED
            entrant.reserved_until_ms = None
            self._bump()
            await self._save_entrant(entrant)
        if expired:
            await self._save_tournament()
