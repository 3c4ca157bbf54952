"""Settlement: one payout intent per paid place, each paid exactly once, then ``closed``.
One part of TournamentWorkflow (workflows/tournament/__init__.py)."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

with workflow.unsafe.imports_passed_through():
    from domain.errors import ErrorCode
    from domain.payouts import resolve_payout_amounts
    from domain.standings import Finish, entries_by_finish, final_standings, split_prizes
    from wire.events import Prize, TournamentEnded, TournamentPayoutSettled, TournamentStateChanged
    from wire.keys import payout_intent_id, rake_key
    from wire.messages import (
        ADDRESS,
        MoneyMove,
        PayoutConfirmation,
        PayoutFailure,
        PayoutStatus,
        PayoutView,
        PrizePayment,
        RetryPayoutsInput,
        TournamentPhase,
        TournamentView,
    )
    from workflows import effects
    from workflows.alarm import Alarm
    from workflows.budget import run_budget_spent
    from workflows.errors import refuse
    from workflows.tournament.books import Books

MAX_RETRY_SECONDS = 30 * 60
WALLET_UNKNOWN_REASON = (
    "payout_wallet_unknown: the wallet that {player}'s entry finishing at place {place} paid"
    " from is not known; an operator names it (POST /admin/tournaments/{{id}}/payouts/retry"
    " with destinations) and the payout is tried again"
)
WALLET = re.compile(ADDRESS)
ZERO_WALLET = "0x" + "0" * 40
ENTRY_WALLETS_PATCH = "entry-wallets-v1"
"""From this patch on, an MTT pays each prize to the wallet its finishing entry paid from
(``Settlement.destinations``); before it, to the player's record's wallet. Asked at each MTT
run's start (a Sit-and-Go has one entry per player: both give the same wallet)."""
STANDINGS_PATCH = "standings-checked-v1"
"""From this patch on, the standings are checked (each place once, every entrant once) before
any payout intent is made (security review N1)."""


class Settlement:
    def __init__(self, books: Books) -> None:
        self.books = books

    async def run(self) -> None:
        """Prizes from the resolved distribution, one intent per paid place, each paid once."""
        b = self.books
        if b.s.phase is TournamentPhase.ENDED:
            field_size = b.s.field_size or 0
            amounts = resolve_payout_amounts(b.settings, field_size)
            places = [Finish(f.player_id, f.place, f.rank) for f in b.s.finishes]
            person = {f.player_id: f.player_id for f in b.s.finishes}
            paid_to = self.destinations()
            wallet = {f.player_id: paid_to[i] for i, f in enumerate(b.s.finishes)}
            if b.s.late is not None:
                # With re-entries one player can finish twice, once per entry: each entry is
                # its own finisher (keyed by its finish), paid to the player (docs/mtt.md),
                # at the wallet that entry paid from.
                person = {f"{i}:{f.player_id}": f.player_id for i, f in enumerate(b.s.finishes)}
                wallet = dict(zip(person, paid_to, strict=True))
                places = [
                    Finish(key, f.place, f.rank)
                    for key, f in zip(person, b.s.finishes, strict=True)
                ]
            if workflow.patched(STANDINGS_PATCH):
                try:
                    places = list(final_standings(places, field_size=field_size))
                except ValueError as err:
                    # Never pay a place twice: fail the task (visibly, retried) rather than
                    # make intents from standings that are not one place per entrant.
                    raise RuntimeError(f"refusing to settle: {err}") from None
            b.s.payouts = [
                PayoutView(
                    intent_id=payout_intent_id(b.s.tournament_id, award.place),
                    position=award.place,
                    player_id=person[award.entrant],
                    amount=award.amount,
                    destination=wallet[award.entrant] or "",
                )
                for award in split_prizes(places, amounts)
                if award.amount > 0
            ]
            for payout in b.s.payouts:
                if not payout.destination:
                    # Refused, visibly, until an operator names the wallet (retry_payouts);
                    # the other places are paid meanwhile.
                    payout.status = PayoutStatus.FAILED
                    payout.failure_reason = WALLET_UNKNOWN_REASON.format(
                        player=payout.player_id, place=payout.position
                    )
            b.s.rake_total = b.settings.rake_fee * field_size
            await effects.create_payout_intents(
                [self.payment(p) for p in b.s.payouts if p.destination]
            )
            b.s.phase = TournamentPhase.SETTLING
            b.bump()
            await b.save_tournament()
            await effects.publish(
                b.s.tournament_id, "state:settling", TournamentStateChanged(state="settling")
            )
            await effects.publish(
                b.s.tournament_id,
                "ended",
                TournamentEnded(
                    final_standings=b.standings(),
                    payouts=[self.payout_wire(p) for p in b.s.payouts],
                ),
            )
        while True:
            if self.rake_due():
                await self.collect_rake()
            pending = [
                p for p in b.s.payouts if p.status is not PayoutStatus.CONFIRMED and p.destination
            ]
            await asyncio.gather(*(self.pay(p) for p in pending))
            if not self.rake_due() and all(p.status is PayoutStatus.CONFIRMED for p in b.s.payouts):
                break
            await self.wait_for_a_retry()
        if all(p.status is PayoutStatus.CONFIRMED for p in b.s.payouts):
            b.s.phase = TournamentPhase.CLOSED
            b.s.closed_at_ms = b.now_ms()
            b.bump()
            await b.save_tournament()
            await effects.publish(
                b.s.tournament_id,
                "state:closed",
                TournamentStateChanged(state="closed", closed_at=b.s.closed_at_ms),
            )
            await b.record_lifecycle()

    def rake_due(self) -> bool:
        b = self.books
        return bool(b.s.rake_total) and b.inp.money_backend == "virtual" and not b.s.rake_collected

    async def collect_rake(self) -> None:
        """The house's share, keyed once per tournament: a definite refusal (the escrow is
        short) waits for the reconciler with the payouts instead of failing the workflow."""
        b = self.books
        try:
            await effects.collect_rake(
                MoneyMove(
                    key=rake_key(b.s.tournament_id),
                    tournament_id=b.s.tournament_id,
                    player_id="house",
                    amount=b.s.rake_total,
                ),
                bound=b.money_ids,
            )
        except ActivityError as err:
            cause = err.cause if isinstance(err.cause, FailureError) else err
            b.s.rake_failure = str(cause)
            b.bump()
            return
        b.s.rake_collected = True
        b.s.rake_failure = None
        b.bump()

    async def wait_for_a_retry(self) -> None:
        """A payout was refused (a definite answer): stay in ``settling``, the reason on the
        intent, until the reconciler's next try (30 s, doubling up to 30 minutes) or an
        operator's re-drive (``retry_payouts``), then try the failed ones again. Each intent
        is keyed, so a retry pays at most once whatever happened before."""
        b = self.books
        b.s.payout_attempts += 1
        delay = min(b.inp.payout_retry_seconds * 2 ** (b.s.payout_attempts - 1), MAX_RETRY_SECONDS)
        b.s.payout_retry_at_ms = b.now_ms() + delay * 1000
        b.bump()
        await b.save_tournament()
        alarm = await Alarm.start(timedelta(seconds=delay), "payout reconciler")
        await workflow.wait_condition(lambda: alarm.fired or b.s.payout_redrive)
        alarm.cancel()
        b.s.payout_redrive = False
        b.s.payout_retry_at_ms = None
        for payout in b.s.payouts:
            if payout.status is PayoutStatus.FAILED and payout.destination:
                payout.status = PayoutStatus.PENDING
        b.bump()
        if run_budget_spent(b.updates_this_run):
            await workflow.wait_condition(workflow.all_handlers_finished)
            workflow.continue_as_new(b.carried())

    async def retry_payouts(self, req: RetryPayoutsInput) -> TournamentView:
        """Operators: try the refused payouts again now (the loop does it; this records it),
        first giving each payout whose entry's wallet is unknown the one named for it."""
        b = self.books
        named = [p for p in b.s.payouts if not p.destination and req.destinations.get(p.intent_id)]
        for payout in named:
            payout.destination = req.destinations[payout.intent_id]
        if named:
            b.bump()
            await effects.create_payout_intents([self.payment(p) for p in named])
        b.s.payout_redrive = True
        b.bump()
        await workflow.wait_condition(lambda: not b.s.payout_redrive)
        return b.view()

    def validate_retry_payouts(self, req: RetryPayoutsInput) -> None:
        b = self.books
        failed = any(p.status is PayoutStatus.FAILED for p in b.s.payouts) or bool(b.s.rake_failure)
        if b.s.phase is not TournamentPhase.SETTLING or not failed or b.s.payout_redrive:
            raise refuse(
                ErrorCode.INVALID_STATE,
                "only a settling tournament with a refused payout can retry its payouts",
            )
        unknown = {p.intent_id for p in b.s.payouts if not p.destination}
        for intent_id, address in req.destinations.items():
            if intent_id not in unknown:
                raise refuse(
                    ErrorCode.VALIDATION_ERROR,
                    f"{intent_id} is not a payout of this tournament whose wallet is unknown"
                    " (a known destination is never changed)",
                )
            if not WALLET.fullmatch(address) or address.lower() == ZERO_WALLET:
                raise refuse(ErrorCode.VALIDATION_ERROR, f"{address!r} is not a wallet address")

    async def pay(self, payout: PayoutView) -> None:
        b = self.books
        try:
            receipt = await effects.pay_prize(self.payment(payout), bound=b.money_ids)
        except ActivityError as err:
            # Only a definite refusal gets here (transient faults retry forever): keep the
            # tournament in `settling` with the reason visible to operators.
            cause = err.cause if isinstance(err.cause, FailureError) else err
            payout.status = PayoutStatus.FAILED
            payout.failure_reason = str(cause)
            b.bump()
            await effects.fail_payout(PayoutFailure(intent_id=payout.intent_id, reason=str(cause)))
            return
        payout.status = PayoutStatus.CONFIRMED
        payout.tx_hash = receipt.tx_hash
        b.bump()
        await effects.confirm_payout(
            PayoutConfirmation(
                intent_id=payout.intent_id, tx_hash=receipt.tx_hash, reference=receipt.reference
            )
        )
        await effects.publish(
            b.s.tournament_id,
            f"payout:{payout.position}",
            TournamentPayoutSettled(
                position=payout.position,
                user_id=payout.player_id,
                amount=payout.amount,
                tx_hash=receipt.tx_hash or receipt.reference,
            ),
        )

    def destinations(self) -> list[str | None]:
        """Where each finish's prize goes, in ``finishes``' order (None: not known).

        Virtual: the owner's account, which paid the entry (an agent's prize goes to its
        owner). On-chain: the wallet the finishing entry paid from, never a re-entry's (security
        review 3, S3: a re-entry that never paid has no wallet, and one paid from another
        wallet is not the finishing entry's). A player's entries finish in the order they were
        paid (an entry is taken only once the one before it busted), and an earlier finish has
        the larger place, so the k-th largest place of a player is its k-th paid entry's; that
        holds only when every paid entry of the player is known (``entry_wallets`` has as many
        as the player has finishes). Otherwise, as before the per-entry wallets (an MTT run on
        the old side of ``ENTRY_WALLETS_PATCH``, or a state carried from before them): the
        player's record's wallet, and None where it has none (where the old code asserted).
        """
        b = self.books
        if b.inp.money_backend != "chain":
            return [f"user:{b.s.entrants[f.player_id].owner_user_id}" for f in b.s.finishes]
        paid: dict[str, list[tuple[int, str]]] = {}
        if b.entry_wallets_on:
            for key, wallet in b.s.entry_wallets.items():
                player, _, entry_no = key.rpartition(":")
                paid.setdefault(player, []).append((int(entry_no), wallet))
        wallets = {player: [w for _, w in sorted(entries)] for player, entries in paid.items()}
        which = entries_by_finish(
            [(f.player_id, f.place) for f in b.s.finishes],
            {player: len(w) for player, w in wallets.items()},
        )
        out: list[str | None] = []
        for f, k in zip(b.s.finishes, which, strict=True):
            if k is not None:
                out.append(wallets[f.player_id][k])
                continue
            record = b.s.entrants.get(f.player_id)
            out.append((record.wallet or None) if record is not None else None)
        return out

    def payment(self, payout: PayoutView) -> PrizePayment:
        b = self.books
        return PrizePayment(
            intent_id=payout.intent_id,
            tournament_id=b.s.tournament_id,
            position=payout.position,
            player_id=payout.player_id,
            amount=payout.amount,
            destination=payout.destination,
        )

    @staticmethod
    def payout_wire(p: PayoutView) -> Prize:
        return Prize(position=p.position, user_id=p.player_id, amount=p.amount)
