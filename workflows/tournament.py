"""TournamentWorkflow: one tournament from registration onwards (id ``tournament-<id>``).

All state lives in one model so it can be carried across continue-as-new; every rule comes
from ``domain/`` and every side effect is an activity (``workflows/effects.py``). Calls that
change state are Updates whose validators refuse bad calls before anything reaches history;
handlers that await hold one lock and re-check under it, because a concurrent call may have
changed the state between validation and execution.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, FailureError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain import registration
    from domain.blinds import resolve_blinds
    from domain.clock import level_at, level_deadline_ms, level_started_at_ms
    from domain.errors import DomainError, ErrorCode
    from domain.payouts import resolve_payout_amounts, resolved_prize_structure
    from domain.seating import draw_seats
    from domain.settings import TournamentSettings, validate_settings
    from domain.standings import Finish as Place
    from domain.standings import force_end_ranking, order_busts, split_prizes
    from workflows import effects
    from workflows import search_attributes as sa
    from workflows.errors import refusal
    from workflows.messages import (
        CancelInput,
        CreateTournamentInput,
        EntrantRow,
        EntrantStatus,
        EntrantView,
        Finish,
        ForceEndInput,
        HandRow,
        LeaveResult,
        LeaveVia,
        LifecycleRecord,
        MoneyMove,
        PayEntryInput,
        PayoutConfirmation,
        PayoutFailure,
        PayoutStatus,
        PayoutView,
        PrizePayment,
        RegisterInput,
        RegisterResult,
        TournamentPhase,
        TournamentRow,
        TournamentState,
        TournamentView,
        Transition,
        UnregisterInput,
    )
    from workflows.table import TableWorkflow
    from workflows.table_messages import HandReport, TableResult, TableSeat, TableState

T = TypeVar("T")
RESERVE_TTL = timedelta(seconds=120)
START_GRACE = timedelta(seconds=3)
HANDS_PER_RUN = 300
"""Continue-as-new after this many hands (each costs the tournament ~15 history events)."""
NO_STAND_UP = (TournamentPhase.PLAYING, TournamentPhase.ENDED, TournamentPhase.SETTLING)


@workflow.defn
class TournamentWorkflow:
    @workflow.init
    def __init__(self, inp: CreateTournamentInput) -> None:
        self.settings: TournamentSettings = validate_settings(inp.settings)
        self.inp = inp
        self.raw_settings = inp.settings
        self.s = inp.carry or TournamentState(tournament_id=inp.tournament_id, name=inp.name)
        self.lock = asyncio.Lock()
        # Entrant rows reference the tournament row: handlers wait until it exists.
        self.row_saved = inp.carry is not None

    @workflow.run
    async def run(self, inp: CreateTournamentInput) -> TournamentView:
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

    async def _registration(self) -> None:
        """Until every seat is paid (seal) or an operator cancels; expire unpaid reserves."""
        while self.s.phase is TournamentPhase.REGISTERING:
            expiry = self._next_reserve_expiry_ms()
            timeout = None
            if expiry is not None:
                timeout = timedelta(milliseconds=max(0, expiry - self._now_ms()))
            try:
                await workflow.wait_condition(
                    self._changed_since(self.s.version),
                    timeout=timeout,
                    timeout_summary="unpaid reserve expiry",
                )
            except TimeoutError:
                pass
            async with self.lock:
                await self._release_expired_reserves()
                if (
                    self.s.phase is TournamentPhase.REGISTERING
                    and self._count(EntrantStatus.PAID) == self.settings.seats
                ):
                    await self._seal()

    async def _seal(self) -> None:
        """The field is full and paid: fix fieldSize, draw seats, announce the start."""
        paid = sorted(p for p, e in self.s.entrants.items() if e.status is EntrantStatus.PAID)
        seats = draw_seats(paid, workflow.random().randrange)
        for player, seat in seats.items():
            self.s.entrants[player].seat = seat
        self.s.field_size = len(paid)
        self.s.phase = TournamentPhase.STARTING
        self.s.starts_at_ms = self._now_ms() + int(START_GRACE.total_seconds() * 1000)
        self._bump()
        for player in paid:
            await self._save_entrant(self.s.entrants[player])
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "tournament_state_changed",
            "state:starting",
            {"state": "starting", "startsAt": self.s.starts_at_ms, "fieldSize": len(paid)},
        )

    async def _start(self) -> None:
        """After the grace, seat the field at the table with starting stacks: `playing`."""
        await workflow.sleep(START_GRACE, summary="start grace")
        paid = [e for e in self.s.entrants.values() if e.status is EntrantStatus.PAID]
        seated: dict[str, int] = {e.player_id: e.seat for e in paid if e.seat is not None}
        assert len(seated) == len(paid), "every paid entrant was seated at the seal"
        self.s.play_start_ms = self._now_ms()
        self.s.stacks = {e.player_id: self.settings.starting_stack for e in paid}
        self.s.table_workflow_id = f"table-{self.s.tournament_id}-1"
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
            self.s.tournament_id, "tournament_state_changed", "state:playing",
            {"state": "playing", "playStartedAt": self.s.play_start_ms, "currentLevel": 0},
        )  # fmt: skip

    async def _play(self) -> None:
        """The level clock and the hand boundaries until one player is left (or force-end)."""
        assert self.s.play_start_ms is not None
        hands_this_run = 0
        while self.s.phase is TournamentPhase.PLAYING:
            deadline = level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level)
            try:
                # Hand boundaries re-park on the same absolute deadline: a fast table still
                # escalates on time.
                await workflow.wait_condition(
                    lambda: bool(self.s.pending_hands) or self.s.table_done is not None,
                    timeout=timedelta(milliseconds=max(0, deadline - self._now_ms())),
                    timeout_summary=f"level {self.s.level} deadline",
                )
            except TimeoutError:
                await self._next_level()
                continue
            while self.s.pending_hands and self.s.phase is TournamentPhase.PLAYING:
                await self._hand_boundary(HandReport.model_validate(self.s.pending_hands.pop(0)))
                hands_this_run += 1
            if self.s.phase is TournamentPhase.PLAYING and self.s.table_done is not None:
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
                if not self.s.pending_hands:
                    workflow.continue_as_new(self.inp.model_copy(update={"carry": self.s}))

    async def _next_level(self) -> None:
        """A level deadline passed: move to the level the clock says (a missed one at once)."""
        assert self.s.play_start_ms is not None
        now = self._now_ms()
        self.s.level = max(self.s.level + 1, level_at(self.settings, self.s.play_start_ms, now))
        self._bump()
        blinds = resolve_blinds(self.settings, self.s.level)
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id,
            "blind_level_changed",
            f"level:{self.s.level}",
            {
                "level": self.s.level,
                "smallBlind": blinds.sb,
                "bigBlind": blinds.bb,
                "ante": blinds.ante,
                "levelEndsAt": level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level),
            },
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
            Finish(player_id=f.entrant, place=f.place, rank=f.rank, hand_no=report.hand_no)
            for f in busts
        ]
        alive = [p for p, chips in stacks.items() if chips > 0]
        if len(alive) == 1:
            finishes.append(Finish(player_id=alive[0], place=1, rank=1, hand_no=report.hand_no))
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
            )
        )
        for finish in finishes:
            if finish.place == 1:
                continue
            await effects.publish(
                self.s.tournament_id, "player_eliminated", f"eliminated:{finish.player_id}",
                {"playerId": finish.player_id, "place": finish.place, "rank": finish.rank,
                 "handNo": report.hand_no},
            )  # fmt: skip
        await effects.publish(
            self.s.tournament_id, "hand_result", f"hand:{report.table_id}:{report.hand_no}",
            {"tableId": report.table_id, "handNo": report.hand_no, "level": report.level,
             "board": report.record.get("board", []), "pots": report.record.get("pots", []),
             "shown": report.record.get("shown", {}), "stacks": stacks},
        )  # fmt: skip
        if len(alive) == 1:
            await self._end()

    async def _end_by_ranking(self) -> None:
        """Force-end: the table stopped; live players take the top places by stack."""
        assert self.s.table_done is not None
        result = TableResult.model_validate(self.s.table_done)
        players = {e.seat: e.player_id for e in self.s.entrants.values() if e.seat is not None}
        stacks = {players[seat]: chips for seat, chips in result.stacks.items()}
        self.s.stacks = stacks
        live = {p: chips for p, chips in stacks.items() if chips > 0}
        ranked = force_end_ranking(live)
        self.s.finishes.extend(
            Finish(player_id=f.entrant, place=f.place, rank=f.rank) for f in ranked
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
                eliminations=[f for f in self.s.finishes if f.hand_no is None],
            )
        )
        await self._end()

    async def _end(self) -> None:
        self.s.phase = TournamentPhase.ENDED
        self.s.ended_at_ms = self._now_ms()
        self._bump()
        await self._save_tournament()
        await effects.publish(
            self.s.tournament_id, "tournament_state_changed", "state:ended",
            {"state": "ended", "endedAt": self.s.ended_at_ms,
             "finalStandings": [f.model_dump(by_alias=True) for f in self._standings()]},
        )  # fmt: skip

    # -- settlement ----------------------------------------------------------------------
    async def _settle(self) -> None:
        """Prizes from the resolved distribution, one intent per paid place, each paid once."""
        if self.s.phase is TournamentPhase.ENDED:
            field_size = self.s.field_size or 0
            amounts = resolve_payout_amounts(self.settings, field_size)
            places = [Place(f.player_id, f.place, f.rank) for f in self.s.finishes]
            self.s.payouts = [
                PayoutView(
                    intent_id=f"{self.s.tournament_id}:payout:{award.place}",
                    position=award.place,
                    player_id=award.entrant,
                    amount=award.amount,
                    destination=self._destination(award.entrant),
                )
                for award in split_prizes(places, amounts)
                if award.amount > 0
            ]
            self.s.rake_total = self.settings.rake_fee * field_size
            await effects.create_payout_intents([self._payment(p) for p in self.s.payouts])
            self.s.phase = TournamentPhase.SETTLING
            self._bump()
            await self._save_tournament()
            await effects.publish(
                self.s.tournament_id, "tournament_state_changed", "state:settling",
                {"state": "settling"},
            )  # fmt: skip
            await effects.publish(
                self.s.tournament_id, "tournament_ended", "ended",
                {"finalStandings": [f.model_dump(by_alias=True) for f in self._standings()],
                 "payouts": [self._payout_wire(p) for p in self.s.payouts]},
            )  # fmt: skip
        if self.s.rake_total and self.inp.money_backend == "virtual":
            await effects.collect_rake(
                MoneyMove(
                    key=f"{self.s.tournament_id}:rake",
                    tournament_id=self.s.tournament_id,
                    player_id="house",
                    amount=self.s.rake_total,
                )
            )
        pending = [p for p in self.s.payouts if p.status is not PayoutStatus.CONFIRMED]
        await asyncio.gather(*(self._pay(p) for p in pending))
        if all(p.status is PayoutStatus.CONFIRMED for p in self.s.payouts):
            self.s.phase = TournamentPhase.CLOSED
            self.s.closed_at_ms = self._now_ms()
            self._bump()
            await self._save_tournament()
            await effects.publish(
                self.s.tournament_id, "tournament_state_changed", "state:closed",
                {"state": "closed", "closedAt": self.s.closed_at_ms},
            )  # fmt: skip
            await self._record_lifecycle()

    async def _pay(self, payout: PayoutView) -> None:
        try:
            receipt = await effects.pay_prize(self._payment(payout))
        except ActivityError as err:
            # Only a definite refusal gets here (transient faults retry forever): keep the
            # tournament in `settling` with the reason visible to operators.
            cause = err.cause if isinstance(err.cause, FailureError) else err
            payout.status = PayoutStatus.FAILED
            payout.failure_reason = str(cause)
            self._bump()
            await effects.fail_payout(PayoutFailure(intent_id=payout.intent_id, reason=str(cause)))
            return
        payout.status = PayoutStatus.CONFIRMED
        payout.tx_hash = receipt.tx_hash
        self._bump()
        await effects.confirm_payout(
            PayoutConfirmation(
                intent_id=payout.intent_id, tx_hash=receipt.tx_hash, reference=receipt.reference
            )
        )
        await effects.publish(
            self.s.tournament_id, "tournament_payout_settled", f"payout:{payout.position}",
            {"position": payout.position, "userId": payout.player_id, "amount": payout.amount,
             "txHash": receipt.tx_hash or receipt.reference},
        )  # fmt: skip

    def _destination(self, player_id: str) -> str:
        if self.inp.money_backend == "chain":
            wallet = self.s.entrants[player_id].wallet
            assert wallet, "an on-chain entrant paid from a wallet"
            return wallet
        return f"user:{player_id}"

    def _payment(self, payout: PayoutView) -> PrizePayment:
        return PrizePayment(
            intent_id=payout.intent_id,
            tournament_id=self.s.tournament_id,
            position=payout.position,
            player_id=payout.player_id,
            amount=payout.amount,
            destination=payout.destination,
        )

    @staticmethod
    def _payout_wire(p: PayoutView) -> dict[str, object]:
        return {"position": p.position, "userId": p.player_id, "amount": p.amount}

    # -- table signals -------------------------------------------------------------------
    @workflow.signal
    def hand_completed(self, report: HandReport) -> None:
        self.s.pending_hands.append(report.model_dump())

    @workflow.signal
    def table_finished(self, result: TableResult) -> None:
        self.s.table_done = result.model_dump()

    # -- operator updates ----------------------------------------------------------------
    @workflow.update
    async def force_end(self, req: ForceEndInput) -> TournamentView:
        """Stop a wedged tournament: the table stops, live seats are ranked by stack."""
        self._recheck(self._verify_force_end, req)
        if not self.s.force_end_requested:
            self.s.force_end_requested = True
            self._bump()
            assert self.s.table_workflow_id is not None
            await workflow.get_external_workflow_handle_for(
                TableWorkflow.run, self.s.table_workflow_id
            ).signal(TableWorkflow.stop)
        await workflow.wait_condition(lambda: self.s.phase is not TournamentPhase.PLAYING)
        return self._view()

    @force_end.validator
    def _validate_force_end(self, req: ForceEndInput) -> None:
        self._recheck(self._verify_force_end, req)

    def _verify_force_end(self, _req: ForceEndInput) -> None:
        if self.s.phase is not TournamentPhase.PLAYING:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"cannot force-end from state '{self.s.phase.value}': only a playing tournament",
            )

    # -- registration updates ------------------------------------------------------------
    @workflow.update
    async def register(self, req: RegisterInput) -> RegisterResult:
        await workflow.wait_condition(lambda: self.row_saved)
        async with self.lock:
            self._recheck(self._verify_register, req)
            previous = self.s.entrants.get(req.player_id)
            until = self._now_ms() + int(RESERVE_TTL.total_seconds() * 1000)
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
        self._recheck(self._verify_register, req)

    def _verify_register(self, req: RegisterInput) -> None:
        self._verify_registering()
        current = self.s.entrants.get(req.player_id)
        if current is not None and current.status is not EntrantStatus.RELEASED:
            raise DomainError(
                ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "already registered for this tournament"
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
        async with self.lock:
            self._recheck(self._verify_pay, req)
            entrant = self.s.entrants[req.player_id]
            move = MoneyMove(
                key=f"{self.s.tournament_id}:entry:{req.player_id}:{entrant.entry_no}",
                tournament_id=self.s.tournament_id,
                player_id=req.player_id,
                amount=self.settings.entry_fee,
                permit=req.permit,
            )
            try:
                await effects.collect_entry(move)
            except ActivityError as err:
                # A definite refusal (insufficient funds): nothing moved, the reserve stands.
                if isinstance(err.cause, ApplicationError) and err.cause.type:
                    raise ApplicationError(
                        err.cause.message, type=err.cause.type, non_retryable=True
                    ) from None
                raise
            entrant.status = EntrantStatus.PAID
            entrant.reserved_until_ms = None
            entrant.wallet = req.permit.owner if req.permit else None
            self._bump()
            await self._save_entrant(entrant)
            await self._save_tournament()
            return RegisterResult(
                status=EntrantStatus.PAID, owner_user_id=entrant.owner_user_id,
                version=self.s.version,
            )  # fmt: skip

    @pay_entry.validator
    def _validate_pay(self, req: PayEntryInput) -> None:
        self._recheck(self._verify_pay, req)

    def _verify_pay(self, req: PayEntryInput) -> None:
        self._verify_registering()
        entrant = self._active_entrant(req.player_id)
        if entrant.status is EntrantStatus.PAID:
            raise DomainError(ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "the entry is already paid")
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

    @workflow.update
    async def unregister(self, req: UnregisterInput) -> LeaveResult:
        async with self.lock:
            self._recheck(self._verify_unregister, req)
            entrant = self.s.entrants[req.player_id]
            refunded = 0
            if entrant.status is EntrantStatus.PAID:
                refunded = await self._refund(entrant)
            entrant.status = EntrantStatus.RELEASED
            entrant.reserved_until_ms = None
            self._bump()
            await self._save_entrant(entrant)
            await self._save_tournament()
            return LeaveResult(
                status=EntrantStatus.RELEASED, refunded=refunded, version=self.s.version
            )

    @unregister.validator
    def _validate_unregister(self, req: UnregisterInput) -> None:
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
        if req.via is LeaveVia.INTERNAL and entrant.status is EntrantStatus.PAID:
            raise DomainError(
                ErrorCode.PAID_REGISTRATION_USE_REFUND_PATH,
                "a paid entry is refunded through the refund path, not unregistered",
            )

    @workflow.update
    async def cancel(self, req: CancelInput) -> TournamentView:
        """Operator cancel during registration: refund every paid entry, then `cancelled`."""
        async with self.lock:
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
                self.s.tournament_id, "tournament_state_changed", "state:cancelled",
                {"state": "cancelled", "reason": req.reason},
            )  # fmt: skip
            await self._record_lifecycle()
            return self._view()

    @cancel.validator
    def _validate_cancel(self, req: CancelInput) -> None:
        self._recheck(self._verify_cancel, req)

    def _verify_cancel(self, _req: CancelInput) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"only a registering tournament can be cancelled, not a {self.s.phase.value} one",
            )

    # -- queries -----------------------------------------------------------------------
    @workflow.query
    def state(self) -> TournamentView:
        return self._view()

    # -- internals ---------------------------------------------------------------------
    @staticmethod
    def _recheck(verify: Callable[[T], None], req: T) -> None:
        try:
            verify(req)
        except DomainError as err:
            raise refusal(err) from None

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

    async def _refund(self, entrant: EntrantView) -> int:
        move = MoneyMove(
            key=f"{self.s.tournament_id}:refund:{entrant.player_id}:{entrant.entry_no}",
            tournament_id=self.s.tournament_id,
            player_id=entrant.player_id,
            amount=self.settings.entry_fee,
            wallet=entrant.wallet,
        )
        await effects.refund_entry(move)
        return move.amount

    def _standings(self) -> list[Finish]:
        return sorted(self.s.finishes, key=lambda f: f.place)

    def _taken(self) -> int:
        return sum(1 for e in self.s.entrants.values() if e.status is not EntrantStatus.RELEASED)

    def _count(self, status: EntrantStatus) -> int:
        return sum(1 for e in self.s.entrants.values() if e.status is status)

    def _now_ms(self) -> int:
        return int(workflow.now().timestamp() * 1000)

    def _changed_since(self, version: int) -> Callable[[], bool]:
        return lambda: self.s.version != version or self.s.phase is not TournamentPhase.REGISTERING

    def _bump(self) -> None:
        self.s.version += 1
        # What the Temporal UI shows as this workflow's current details.
        alive = sum(1 for chips in self.s.stacks.values() if chips > 0)
        workflow.set_current_details(
            f"{self.s.phase.value}: {self._taken()}/{self.settings.seats} entrants, level "
            f"{self.s.level}, {self.s.hands_played} hands, {alive or '-'} players left"
        )

    def _next_reserve_expiry_ms(self) -> int | None:
        times = [
            e.reserved_until_ms
            for e in self.s.entrants.values()
            if e.status is EntrantStatus.RESERVED and e.reserved_until_ms is not None
        ]
        return min(times) if times else None

    async def _release_expired_reserves(self) -> None:
        now = self._now_ms()
        expired = [
            e
            for e in self.s.entrants.values()
            if e.status is EntrantStatus.RESERVED
            and e.reserved_until_ms is not None
            and e.reserved_until_ms <= now
        ]
        for entrant in expired:
            entrant.status = EntrantStatus.RELEASED
            entrant.reserved_until_ms = None
            self._bump()
            await self._save_entrant(entrant)
        if expired:
            await self._save_tournament()

    def _view(self) -> TournamentView:
        return TournamentView(
            tournament_id=self.s.tournament_id,
            name=self.s.name,
            state=self.s.phase,
            kind=str(self.settings.kind),
            seats=self.settings.seats,
            entry_fee=self.settings.entry_fee,
            starting_stack=self.settings.starting_stack,
            registered_count=self._taken(),
            paid_count=self._count(EntrantStatus.PAID),
            field_size=self.s.field_size,
            starts_at_ms=self.s.starts_at_ms,
            play_start_ms=self.s.play_start_ms,
            current_level=self.s.level,
            level_ends_at_ms=(
                level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level)
                if self.s.play_start_ms is not None
                else None
            ),
            table_workflow_id=self.s.table_workflow_id,
            hands_played=self.s.hands_played,
            stacks=dict(self.s.stacks),
            standings=self._standings(),
            payouts=list(self.s.payouts),
            entry_fees_total=self.settings.entry_fee * (self.s.field_size or 0),
            rake_total=self.s.rake_total,
            settings=self.raw_settings,
            entrants=[
                e for e in self.s.entrants.values() if e.status is not EntrantStatus.RELEASED
            ],
            version=self.s.version,
        )

    def _record_transition(self) -> None:
        if not self.s.transitions or self.s.transitions[-1].state != self.s.phase.value:
            self.s.transitions.append(Transition(state=self.s.phase.value, at_ms=self._now_ms()))

    async def _record_lifecycle(self) -> None:
        field_size = self.s.field_size or self.settings.seats
        summary = "/".join(
            f"{p.percent:g}" for p in resolved_prize_structure(self.settings, field_size)
        )
        try:
            await effects.record_lifecycle(
                LifecycleRecord(
                    tournament_id=self.s.tournament_id,
                    seats=self.settings.seats,
                    entry_fee=self.settings.entry_fee,
                    starting_stack=self.settings.starting_stack,
                    level_duration_seconds=self.settings.level_duration_ms // 1000,
                    action_timeout_seconds=self.settings.action_timeout_seconds,
                    prize_structure_summary=summary,
                    transitions=list(self.s.transitions),
                    closed_at_ms=self._now_ms(),
                    actual_payouts=[p.amount for p in self.s.payouts],
                    auto_fold_count=self.s.auto_folds,
                )
            )
        except ActivityError:
            workflow.logger.warning("tournament.lifecycle span not recorded")

    async def _save_tournament(self) -> None:
        self._record_transition()
        workflow.upsert_search_attributes(
            [
                sa.TOURNAMENT_STATE.value_set(self.s.phase.value),
                sa.TABLE_KIND.value_set(str(self.settings.kind)),
                sa.SEATS.value_set(self.settings.seats),
                sa.ENTRY_FEE.value_set(self.settings.entry_fee),
                sa.CURRENT_LEVEL.value_set(self.s.level),
            ]
        )
        await effects.save_tournament(
            TournamentRow(
                tournament_id=self.s.tournament_id,
                name=self.s.name,
                kind=str(self.settings.kind),
                seats=self.settings.seats,
                entry_fee=self.settings.entry_fee,
                rake_fee=self.settings.rake_fee,
                starting_stack=self.settings.starting_stack,
                settings=self.raw_settings,
                state=self.s.phase,
                workflow_id=workflow.info().workflow_id,
                registered_count=self._taken(),
                current_level=self.s.level,
                field_size=self.s.field_size,
                play_started_at_ms=self.s.play_start_ms,
                level_started_at_ms=(
                    level_started_at_ms(self.settings, self.s.play_start_ms, self.s.level)
                    if self.s.play_start_ms is not None
                    else None
                ),
                ended_at_ms=self.s.ended_at_ms,
            )
        )

    async def _save_entrant(self, entrant: EntrantView) -> None:
        await effects.save_entrant(
            EntrantRow(
                tournament_id=self.s.tournament_id,
                player_id=entrant.player_id,
                owner_user_id=entrant.owner_user_id,
                is_agent=entrant.is_agent,
                advisor_agent_id=entrant.advisor_agent_id,
                status=entrant.status,
                seat=entrant.seat,
            )
        )
