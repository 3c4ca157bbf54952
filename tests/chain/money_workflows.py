"""Test-only workflows that run one money activity by name under a never-give-up retry policy."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from wire.messages import MoneyMove, MoneyReceipt, PayoutReceipt, PrizePayment

# What settlement uses: transient faults retry forever with capped backoff; refusals do not.
RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=100),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(milliseconds=500),
)


def _options() -> dict[str, object]:
    return {
        "start_to_close_timeout": timedelta(seconds=30),
        "heartbeat_timeout": timedelta(seconds=10),
        "retry_policy": RETRY,
    }


@workflow.defn
class PayPrizeWorkflow:
    @workflow.run
    async def run(self, payment: PrizePayment) -> PayoutReceipt:
        return await workflow.execute_activity(
            "pay_prize",
            payment,
            result_type=PayoutReceipt,
            **_options(),  # type: ignore[arg-type]
        )


@workflow.defn
class MoneyMoveWorkflow:
    @workflow.run
    async def run(self, activity_name: str, move: MoneyMove) -> MoneyReceipt:
        return await workflow.execute_activity(
            activity_name,
            move,
            result_type=MoneyReceipt,
            **_options(),  # type: ignore[arg-type]
        )
