"""A tournament's entries: the entry rules over its state (``domain/registration.py``, coded
for a handler or validator), the money steps of an entry (its fee's key, its refund),
releasing expired reserves, and sealing the field. Both registration designs
(workflows/tournament/registration.py and registration_legacy.py) hold one, so both check and
move exactly the same."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain import registration
    from domain.errors import ErrorCode
    from domain.seating import draw_seats
    from wire.events import TournamentStateChanged
    from wire.keys import entry_key, refund_key
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
    from workflows import effects
    from workflows.errors import coded, refuse
    from workflows.tournament.books import LIFECYCLE_PATCH, Books


def entry_wallet_key(entrant: EntrantView) -> str:
    """``TournamentState.entry_wallets``' key of this entry: ``<player>:<entry no>``."""
    return f"{entrant.player_id}:{entrant.entry_no}"


START_GRACE = timedelta(seconds=3)
"""From the field sealing (``starting``) to the first deal."""


class Entries:
    """The entry rules and steps both registration designs share (no state of their own)."""

    def __init__(self, books: Books) -> None:
        self.books = books

    async def seal(self) -> None:
        """The field is full and paid: fix fieldSize, draw seats, announce the start."""
        b = self.books
        paid = sorted(p for p, e in b.s.entrants.items() if e.status is EntrantStatus.PAID)
        seats = draw_seats(paid, workflow.random().randrange)
        for player, seat in seats.items():
            b.s.entrants[player].seat = seat
        b.s.field_size = len(paid)
        b.s.phase = TournamentPhase.STARTING
        # The lifecycle span opens here: from now on each transition is emitted as it happens.
        b.s.lifecycle_live = workflow.patched(LIFECYCLE_PATCH)
        b.s.starts_at_ms = b.now_ms() + int(START_GRACE.total_seconds() * 1000)
        b.bump()
        for player in paid:
            await b.save_entrant(b.s.entrants[player])
        await b.save_tournament()
        await effects.publish(
            b.s.tournament_id,
            "state:starting",
            TournamentStateChanged(
                state="starting", starts_at=b.s.starts_at_ms, field_size=len(paid)
            ),
        )

    # -- late registration (an MTT's, docs/mtt.md "Late registration and re-entry") ------
    def late_open(self) -> bool:
        """Registration is open into play: an MTT's late registration, until its close."""
        s = self.books.s
        # An operator's force-end stops the tables: nobody is seated after it.
        return (
            s.late is not None
            and s.late.open
            and s.phase is TournamentPhase.PLAYING
            and not s.force_end_requested
        )

    def entry_phase(self) -> str:
        """The phase the entry rules see: registering while late registration is open."""
        return registration.REGISTERING if self.late_open() else self.books.s.phase.value

    def verify_late_register(self, req: RegisterInput, *, clock: bool) -> None:
        """A registration during late registration: a new entrant as before; a player whose
        entry busted re-enters (``verify_re_entry``) as a new entry. The field's bound counts
        every entry, busted and re-entered (``fieldSize`` so far) plus the reserves held."""
        b = self.books
        late = b.s.late
        assert late is not None
        entrants = dict(b.s.entrants)
        current = entrants.get(req.player_id)
        paid = late.entries.get(req.player_id, 0)
        with coded():
            if paid and current is not None and current.status is not EntrantStatus.RESERVED:
                registration.verify_re_entry(
                    paid_entries=paid,
                    alive=b.s.stacks.get(req.player_id, 0) > 0,
                    max_re_entries=b.settings.max_re_entries,
                )
                # The busted entry holds no seat: the rules see it as gone (no cooldown: it
                # did not leave).
                entrants[req.player_id] = current.model_copy(
                    update={"status": EntrantStatus.RELEASED, "released_at_ms": None}
                )
            registration.verify_register(
                req,
                entrants,
                phase=registration.REGISTERING,
                kind=b.settings.kind,
                seats=b.settings.field_bound,
                now_ms=b.now_ms() if clock else None,
                cooldown_seconds=b.inp.reregister_cooldown_seconds,
                taken_now=(b.s.field_size or 0) + b.count(EntrantStatus.RESERVED),
            )

    def verify_register(self, req: RegisterInput, *, clock: bool) -> None:
        """``clock``: also the come-back cooldown, which reads the clock, so only the
        validator checks it (a validator is never replayed; the loop decides from state)."""
        b = self.books
        if self.late_open():
            self.verify_late_register(req, clock=clock)
            return
        with coded():
            registration.verify_register(
                req,
                b.s.entrants,
                phase=b.s.phase.value,
                kind=b.settings.kind,
                seats=b.settings.field_bound,
                now_ms=b.now_ms() if clock else None,
                cooldown_seconds=b.inp.reregister_cooldown_seconds,
            )

    def verify_reserve_alive(self, req: PayEntryInput) -> None:
        """Checked in the validator only: replay never runs validators, so a pay that older
        code accepted at the boundary still replays."""
        with coded():
            registration.verify_reserve_alive(
                self.books.s.entrants[req.player_id], self.books.now_ms()
            )

    def verify_pay(self, req: PayEntryInput) -> None:
        b = self.books
        with coded():
            registration.verify_pay(
                req,
                b.s.entrants,
                phase=self.entry_phase(),
                entry_fee=b.settings.entry_fee,
                on_chain=b.inp.money_backend == "chain",
            )

    def verify_unregister(self, req: UnregisterInput) -> None:
        b = self.books
        phase = b.s.phase.value
        if self.late_open() and req.via != "stand_up":
            entry = b.s.entrants.get(req.player_id)
            if entry is not None and entry.status is EntrantStatus.PAID:
                # Paid during play means seated and dealt in: no refund (docs/mtt.md).
                raise refuse(
                    ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
                    "play has started: a paid entry plays on and is not refunded (only an "
                    "unpaid reserve can leave during late registration)",
                )
            phase = registration.REGISTERING
        with coded():
            registration.verify_unregister(req, b.s.entrants, phase=phase)

    def verify_cancel(self) -> None:
        with coded():
            registration.verify_cancel(self.books.s.phase.value)

    def already_paid(self, req: PayEntryInput) -> bool:
        """A retry of a pay that went through (its answer was lost): the same answer again,
        and nothing moves. The fee must match, so a different call is still refused."""
        entrant = self.books.s.entrants.get(req.player_id)
        return (
            entrant is not None
            and entrant.status is EntrantStatus.PAID
            and req.amount == self.books.settings.entry_fee
        )

    def paid_answer(self, entrant: EntrantView) -> RegisterResult:
        return RegisterResult(
            status=EntrantStatus.PAID,
            owner_user_id=entrant.owner_user_id,
            version=self.books.s.version,
        )

    def record_paid(self, entrant: EntrantView) -> None:
        """``entrant``'s fee is in: keep the wallet it paid from with this entry (a re-entry's
        record replaces this one, and its prize, if any, still goes here)."""
        if entrant.wallet:
            self.books.s.entry_wallets[entry_wallet_key(entrant)] = entrant.wallet

    def entry_key(self, entrant: EntrantView) -> str:
        """The idempotency key of this entry's fee: the vault records the deposit under it."""
        return entry_key(self.books.s.tournament_id, entrant.player_id, entrant.entry_no)

    def fee_move(self, req: PayEntryInput) -> MoneyMove:
        """The fee's money move for ``req`` (its entrant holds a reserve)."""
        b = self.books
        entrant = b.s.entrants[req.player_id]
        return MoneyMove(
            key=self.entry_key(entrant),
            tournament_id=b.s.tournament_id,
            player_id=req.player_id,
            owner_user_id=entrant.owner_user_id,
            amount=b.settings.entry_fee,
            permit=req.permit,
        )

    async def refund(self, entrant: EntrantView) -> int:
        b = self.books
        move = MoneyMove(
            key=refund_key(b.s.tournament_id, entrant.player_id, entrant.entry_no),
            tournament_id=b.s.tournament_id,
            player_id=entrant.player_id,
            owner_user_id=entrant.owner_user_id,
            amount=b.settings.entry_fee,
            wallet=entrant.wallet,
            entry_key=self.entry_key(entrant),
        )
        await effects.refund_entry(move, bound=b.money_ids)
        b.s.entry_wallets.pop(entry_wallet_key(entrant), None)  # a refunded entry finishes nowhere
        return move.amount

    async def release_reserves(self, due: set[tuple[str, int]]) -> None:
        """Release the reserves whose alarms fired, if they are still unpaid."""
        b = self.books
        expired = [
            e
            for e in b.s.entrants.values()
            if e.status is EntrantStatus.RESERVED
            and not e.paying  # its fee is moving: the payment's outcome decides
            and (e.player_id, e.entry_no) in due
        ]
        for entrant in expired:
            entrant.status = EntrantStatus.RELEASED
            entrant.reserved_until_ms = None
            b.bump()
            await b.save_entrant(entrant)
        if expired:
            await b.save_tournament()

    async def reserve(self, req: RegisterInput) -> EntrantView:
        """Hold a seat for ``req`` (checked): the entrant row, then the tournament's. Its
        alarm, if any, is the registration design's to arm."""
        b = self.books
        previous = b.s.entrants.get(req.player_id)
        entrant = EntrantView(
            player_id=req.player_id,
            owner_user_id=req.owner_user_id,
            is_agent=req.is_agent,
            status=EntrantStatus.RESERVED,
            reserved_until_ms=b.now_ms() + b.inp.reserve_seconds * 1000,
            advisor_agent_id=req.advisor_agent_id,
            entry_no=(previous.entry_no + 1) if previous else 1,
        )
        b.s.entrants[req.player_id] = entrant
        b.bump()
        await b.save_entrant(entrant)
        await b.save_tournament()
        return entrant

    def reserved_answer(self, entrant: EntrantView) -> RegisterResult:
        return RegisterResult(
            status=EntrantStatus.RESERVED,
            owner_user_id=entrant.owner_user_id,
            reserved_until_ms=entrant.reserved_until_ms,
            version=self.books.s.version,
        )

    async def leave(self, req: UnregisterInput) -> LeaveResult:
        """``req`` (checked) leaves: a paid entry is refunded first."""
        b = self.books
        entrant = b.s.entrants[req.player_id]
        refunded = 0
        if entrant.status is EntrantStatus.PAID:
            refunded = await self.refund(entrant)
        entrant.status = EntrantStatus.RELEASED
        entrant.reserved_until_ms = None
        entrant.released_at_ms = b.now_ms()
        b.bump()
        await b.save_entrant(entrant)
        await b.save_tournament()
        return LeaveResult(status=EntrantStatus.RELEASED, refunded=refunded, version=b.s.version)

    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel (checked, no fee moving): refund every paid entry, then
        ``cancelled``."""
        b = self.books
        for entrant in b.s.entrants.values():
            if entrant.status is EntrantStatus.PAID:
                await self.refund(entrant)
            if entrant.status is not EntrantStatus.RELEASED:
                entrant.status = EntrantStatus.RELEASED
                entrant.reserved_until_ms = None
                await b.save_entrant(entrant)
        b.s.phase = TournamentPhase.CANCELLED
        b.bump()
        await b.save_tournament()
        await effects.publish(
            b.s.tournament_id,
            "state:cancelled",
            TournamentStateChanged(state="cancelled", reason=req.reason),
        )
        await b.record_lifecycle()
        return b.view()
