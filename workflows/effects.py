"""Every side effect a workflow takes, as one call each with its timeout and retry policy.

Persistence and events must eventually happen (PostgreSQL may be down a while): they retry
forever with a capped backoff. Money moves do too, but a definite refusal (insufficient
funds) is non-retryable and surfaces to the caller as an ApplicationError with its code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.events import EventActivities
    from activities.money import VirtualMoneyActivities
    from activities.persistence import PersistenceActivities
    from domain.errors import ErrorCode
    from workflows.messages import (
        EntrantRow,
        EventInput,
        HandRow,
        MoneyMove,
        MoneyReceipt,
        TournamentRow,
    )

DB_TIMEOUT = timedelta(seconds=30)
FOREVER = RetryPolicy(maximum_interval=timedelta(seconds=30))
MONEY_RETRY = RetryPolicy(
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=[
        ErrorCode.INSUFFICIENT_FUNDS.value,
        ErrorCode.VALIDATION_ERROR.value,
    ],
)


async def save_tournament(row: TournamentRow) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.save_tournament,
        row,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"persist tournament ({row.state.value})",
    )


async def record_hand(row: HandRow) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.record_hand,
        row,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"record hand {row.hand_no}",
    )


async def save_entrant(row: EntrantRow) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.save_entrant,
        row,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"persist entrant {row.player_id} ({row.status.value})",
    )


async def publish(
    tournament_id: str, type_: str, dedupe_key: str, payload: dict[str, object]
) -> None:
    await workflow.execute_activity_method(
        EventActivities.publish_event,
        EventInput(tournament_id=tournament_id, type=type_, dedupe_key=dedupe_key, payload=payload),
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"publish {type_}",
    )


async def collect_entry(move: MoneyMove) -> MoneyReceipt:
    return await workflow.execute_activity_method(
        VirtualMoneyActivities.collect_entry,
        move,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=MONEY_RETRY,
        summary=f"collect entry fee from {move.player_id}",
    )


async def refund_entry(move: MoneyMove) -> MoneyReceipt:
    return await workflow.execute_activity_method(
        VirtualMoneyActivities.refund_entry,
        move,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=MONEY_RETRY,
        summary=f"refund entry fee to {move.player_id}",
    )
