"""A tournament's entries: the rules of who may register, pay, leave and cancel, the money
steps of an entry (its fee's key, its refund), releasing expired reserves, and sealing the
field. Shared by the registration loop (workflows/tournament_registration.py) and the
handlers that served registration before it (workflows/tournament_registration_legacy.py),
so both check and move exactly the same; part of TournamentWorkflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain import registration
    from domain.errors import DomainError, ErrorCode
    from domain.seating import draw_seats
    from wire.events import TournamentStateChanged
    from wire.keys import entry_key, refund_key
    from wire.messages import (
        CancelInput,
        EntrantStatus,
        EntrantView,
        LeaveVia,
        MoneyMove,
        PayEntryInput,
        RegisterInput,
        RegisterResult,
        TournamentPhase,
        UnregisterInput,
    )
    from workflows import effects
    from workflows.tournament_base import LIFECYCLE_PATCH, TournamentBase


START_GRACE = timedelta(seconds=3)
"""From the field sealing (``starting``) to the first deal."""
MAX_ENTRIES = 5
"""Registrations one player may make in one tournament (each leave and come back is one)."""
NO_STAND_UP = (TournamentPhase.PLAYING, TournamentPhase.ENDED, TournamentPhase.SETTLING)


class Entries(TournamentBase):
    """The entry rules and steps both registration designs share (no state of their own)."""

    async def _seal(self) -> None:
        """The field is full and paid: fix fieldSize, draw seats, announce the start."""
        paid = sorted(p for p, e in self.s.entrants.items() if e.status is EntrantStatus.PAID)
        seats = draw_seats(paid, workflow.random().randrange)
        for player, seat in seats.items():
            self.s.entrants[player].seat = seat
        self.s.field_size = len(paid)
        self.s.phase = TournamentPhase.STARTING
        # The lifecycle span opens here: from now on each transition is emitted as it happens.
        self.s.lifecycle_live = workflow.patched(LIFECYCLE_PATCH)
        self.s.starts_at_ms = self._now_ms() + int(START_GRACE.total_seconds() * 1000)
        self._bump()
        for player in paid:
            await self._save_entrant(self.s.entrants[player])
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "state:starting",
            TournamentStateChanged(
                state="starting", starts_at=self.s.starts_at_ms, field_size=len(paid)
            ),
        )

    def _verify_registering(self) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
                f"tournament is {self.s.phase.value}, not registering",
            )

    def _verify_register(self, req: RegisterInput, *, clock: bool) -> None:
        """``clock``: also the come-back cooldown, which reads the clock, so only the
        validator checks it (a validator is never replayed; the loop decides from state)."""
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
        if (
            clock
            and current is not None
            and current.released_at_ms is not None
            and current.entry_no >= 2
        ):
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

    def _verify_cancel(self, _req: CancelInput) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"only a registering tournament can be cancelled, not a {self.s.phase.value} one",
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
