"""ReconcilerWorkflow: the seed's 30-second payout reconciler, one sweep per run.

The Temporal Schedule ``sng-payout-reconciler`` (``worker.ensure_reconciler_schedule``) starts
a run every 30 seconds, skipping a tick while the last sweep still runs. A sweep pages through
the payout intents that are still unconfirmed and older than 30 seconds, whatever became of
the tournament that made them (terminated, reset, wedged, or simply waiting for its own retry
timer), clears their refusal, and drives each through the money backend's ``pay_prize``,
keyed by the intent, then confirms it and publishes ``tournament_payout_settled`` under the
tournament's own dedupe key. The tournament's settlement drives the same intents with the same
keyed activity, so whichever gets there second moves nothing (``applied=False``) and only
confirms.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from wire.events import TournamentPayoutSettled
    from wire.messages import PayoutConfirmation, PayoutFailure, PrizePayment
    from wire.reconciler import CLOSE_PAGE, DuePayoutsQuery, ReconcileInput, ReconcileResult
    from workflows import effects

SWEEP_CLOSES_PATCH = "sweep-closes-v1"
"""From this patch on, a sweep's last step closes, in the read model, each tournament whose
workflow ended in ``settling`` once every one of its intents is paid (issue 41: such a
tournament stayed ``settling`` and its event stream never ended). Asked at each sweep run's
start."""

PAGES_PER_RUN = 20
"""A sweep continues as new after this many pages (or sooner when the server suggests it),
so a long backlog never makes one long history."""


@workflow.defn
class ReconcilerWorkflow:
    @workflow.run
    async def run(self, inp: ReconcileInput | None = None) -> ReconcileResult:
        inp = inp or ReconcileInput()
        # Whether each re-drive carries its intent's own id (the codec binds to it).
        self.bound = workflow.patched(effects.MONEY_IDS_PATCH)
        # Whether the sweep ends by closing settlements whose workflow ended (terminated).
        closes = workflow.patched(SWEEP_CLOSES_PATCH)
        result = ReconcileResult()
        after = inp.after
        for _ in range(PAGES_PER_RUN):
            page = await effects.due_payouts(
                DuePayoutsQuery(
                    older_than_seconds=inp.older_than_seconds, after=after, limit=inp.page_size
                )
            )
            outcomes = await asyncio.gather(*(self._redrive(p) for p in page))
            for payment, outcome in zip(page, outcomes, strict=True):
                getattr(result, outcome).append(payment.intent_id)
            if len(page) < inp.page_size:
                if closes:
                    try:
                        result.closed = await effects.close_orphaned_settlements(CLOSE_PAGE)
                    except ActivityError as err:  # the next sweep asks again
                        workflow.logger.warning("closing ended settlements failed: %s", err)
                return result
            after = page[-1].intent_id
            if workflow.info().is_continue_as_new_suggested():
                break
        workflow.continue_as_new(inp.model_copy(update={"after": after}))

    async def _redrive(self, payment: PrizePayment) -> str:
        """``confirmed``, ``refused`` or ``deferred`` (the result's lists)."""
        try:
            receipt = await effects.redrive_prize(
                payment,
                activity_id=effects.money_activity_id("redrive", payment.intent_id, self.bound),
            )
        except ActivityError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.non_retryable:
                # A definite refusal: recorded as settlement records it, for the next sweep.
                await effects.fail_payout(
                    PayoutFailure(intent_id=payment.intent_id, reason=str(cause))
                )
                return "refused"
            reason = cause if isinstance(cause, FailureError) else err
            workflow.logger.warning("payout %s deferred: %s", payment.intent_id, reason)
            return "deferred"
        if receipt.intent_id != payment.intent_id or receipt.amount not in (None, payment.amount):
            # Not this intent's receipt (security review N1): record nothing from it.
            workflow.logger.warning(
                "refused a receipt for %s answering %s", receipt.intent_id, payment.intent_id
            )
            return "deferred"
        await effects.confirm_payout(
            PayoutConfirmation(
                intent_id=payment.intent_id, tx_hash=receipt.tx_hash, reference=receipt.reference
            )
        )
        await effects.publish(
            payment.tournament_id,
            f"payout:{payment.position}",  # the tournament's own key: one event per intent
            TournamentPayoutSettled(
                position=payment.position,
                user_id=payment.player_id,
                amount=payment.amount,
                tx_hash=receipt.tx_hash or receipt.reference,
            ),
        )
        return "confirmed"
