"""Every side effect a workflow takes, as one call each with its timeout and retry policy.

Persistence and events must eventually happen (PostgreSQL may be down a while): they retry
forever with a capped backoff. Money moves do too, but a definite refusal (insufficient
funds) is non-retryable and surfaces to the caller as an ApplicationError with its code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.common import RawValue, RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.events import EventActivities
    from activities.money import VirtualMoneyActivities
    from activities.persistence import PersistenceActivities
    from activities.readmodel import ReadModelActivities
    from activities.reconciler import ReconcilerActivities
    from activities.rooms import RoomActivities
    from activities.table import new_deck_seed, new_secret, wall_clock_ms
    from activities.telemetry import TelemetryActivities
    from domain.errors import ErrorCode
    from wire.events import Event
    from wire.messages import (
        EntrantRow,
        EventInput,
        HandRow,
        LifecycleRecord,
        LifecycleTransition,
        MoneyMove,
        MoneyReceipt,
        PayoutConfirmation,
        PayoutFailure,
        PayoutReceipt,
        PrizePayment,
        TournamentDelta,
        TournamentRow,
    )
    from wire.reconciler import DuePayoutsQuery
    from wire.table_messages import (
        DeckDraw,
        RoomHandInput,
        RoomMove,
        RoomRow,
        SeenQuery,
        StreamQuery,
        StreamStatus,
        TablePublication,
    )

# Short: these writes take milliseconds, and a worker that dies mid-activity is only noticed
# when this runs out (then the retry goes to a live worker).
DB_TIMEOUT = timedelta(seconds=10)
FOREVER = RetryPolicy(maximum_interval=timedelta(seconds=30))
MONEY_RETRY = RetryPolicy(
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=[
        ErrorCode.INSUFFICIENT_FUNDS.value,
        ErrorCode.VALIDATION_ERROR.value,
    ],
)
# A payout never gives up on a transient fault (RPC down, PostgreSQL down): capped backoff,
# no attempt limit. A definite refusal is raised non-retryable by the activity itself.
PAYOUT_RETRY = RetryPolicy(maximum_interval=timedelta(minutes=1))
# On-chain legs wait for receipts (and heartbeat while they do).
CHAIN_TIMEOUT = timedelta(minutes=5)


R = TypeVar("R", MoneyReceipt, PayoutReceipt)


async def _checked(
    move: Callable[[str | None], Awaitable[RawValue]],
    ref: str,
    amount: int,
    activity_id: str | None,
    kind: type[R],
) -> R:
    """A money move's receipt, checked against the move that was sent before anyone marks an
    entry paid, a seat bought or a payout confirmed (security review N1).

    Whoever can poll the task queue can answer the activity with a sealed receipt lifted
    from this workflow's history (another entrant's paid entry). A receipt for another key
    (a payout's: another intent) or amount is not this move's: nothing is recorded from it,
    and the same keyed move is sent again (it moves at most once), after a short wait, until a
    worker answers for it. Receipts written before they carried an amount are taken on their
    key.

    ``activity_id`` (``money_activity_id``): the move's own activity id, so the codec binds
    its input, heartbeats and result to this move alone; a send after a refused receipt is
    ``<id>#2``, ``#3``, ... None: the server numbers it (runs from before ``MONEY_IDS_PATCH``).
    A result sealed for another move then does not even open (the codec hands over a refused
    stand-in): the result is taken raw and opened here, so such a receipt is refused like any
    other, instead of failing the workflow task on every retry.
    """
    refused = 0
    while True:
        resent = f"{activity_id}#{refused + 1}" if activity_id and refused else None
        raw = await move(resent or activity_id)
        receipt: R | None
        try:
            receipt = workflow.payload_converter().from_payload(raw.payload, kind)
        except Exception as err:  # refused by the codec (sealed for another move), or junk
            workflow.logger.warning("refused an unreadable receipt answering %s: %s", ref, err)
            receipt = None
        if receipt is not None:
            named = receipt.intent_id if isinstance(receipt, PayoutReceipt) else receipt.key
            if named == ref and receipt.amount in (None, amount):
                return receipt
        refused += 1
        if receipt is not None:
            workflow.logger.warning(
                "refused a receipt for %s (amount %s) answering %s of %s",
                named,
                receipt.amount,
                ref,
                amount,
            )
        await workflow.sleep(timedelta(seconds=min(2**refused, 60)), summary="receipt refused")


MONEY_IDS_PATCH = "money-activity-ids-v1"
"""From this patch on, a tournament's and the reconciler's money activities carry an id of
their own move (``money_activity_id``) instead of the server's number (security review 3, S1):
the codec binds an activity's payloads to its id, and numbered ids all bound as ``""``, so one
fee's sealed heartbeat opened as any other fee's of the same tournament. Asked once at each
run's start (``TournamentWorkflow.run``, ``ReconcilerWorkflow.run``)."""


def money_activity_id(step: str, key: str, bound: bool) -> str | None:
    """The activity id of a money move: ``<step>:<its idempotency key>`` (None before the
    patch, when the server numbers it).

    >>> money_activity_id("collect", "t1:entry:alice:1", True)
    'collect:t1:entry:alice:1'
    >>> money_activity_id("collect", "t1:entry:alice:1", False) is None
    True
    """
    return f"{step}:{key}" if bound else None


async def read_clock_ms() -> int:
    """A time that decisions will rest on (a level clock's start), recorded in history."""
    return await workflow.execute_activity(
        wall_clock_ms,
        start_to_close_timeout=timedelta(seconds=5),
        retry_policy=FOREVER,
        summary="read the clock",
    )


async def new_report_secret(table_id: str) -> str:
    """The secret a table's reports carry, so the tournament takes reports only from it."""
    return await workflow.execute_activity(
        new_secret,
        table_id,
        start_to_close_timeout=timedelta(seconds=5),
        retry_policy=FOREVER,
        summary=f"report secret for {table_id}",
    )


async def draw_deck(table_hand: str) -> DeckDraw:
    return await start_draw_deck(table_hand)


def start_draw_deck(table_hand: str) -> workflow.ActivityHandle[DeckDraw]:
    """The same draw, as a handle the caller may stop waiting for."""
    return workflow.start_activity(
        new_deck_seed,
        table_hand,
        start_to_close_timeout=timedelta(seconds=5),
        retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=5)),
        summary=f"deck seed for {table_hand}",
    )


async def local_draw_deck(table_hand: str) -> DeckDraw:
    """The same draw by local activity (``deck-local-v1``): one marker event, in the task
    that asked for it, instead of an activity's three events and a task of its own. The
    marker's result goes through the payload codec like the activity's did, and a worker
    that dies mid-draw leaves no marker: the next one draws again, and a replay reads the
    recorded draw. Its time is not the hand's: the table records ``workflow.now()``
    (``Dealer.draw``)."""
    return await workflow.execute_local_activity(
        new_deck_seed,
        table_hand,
        start_to_close_timeout=timedelta(seconds=5),
        retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=5)),
        summary=f"deck seed for {table_hand}",
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


async def publish_entrants(delta: TournamentDelta) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.publish_entrants,
        delta,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"publish {len(delta.entrants)} entrants (version {delta.version})",
    )


async def save_entrant(row: EntrantRow) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.save_entrant,
        row,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"persist entrant {row.player_id} ({row.status.value})",
    )


async def publish(tournament_id: str, dedupe_key: str, event: Event) -> None:
    """Append one event (``wire/events.py``) to the tournament's log, once per dedupe key."""
    await workflow.execute_activity_method(
        EventActivities.publish_event,
        EventInput(
            tournament_id=tournament_id,
            type=event.TYPE,
            dedupe_key=dedupe_key,
            payload=event.payload(),
        ),
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"publish {event.TYPE}",
    )


async def collect_entry(move: MoneyMove, *, bound: bool) -> MoneyReceipt:
    return await _checked(
        lambda activity_id: workflow.execute_activity(
            "collect_entry",  # same activity name on the chain backend
            move,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            activity_id=activity_id,
            start_to_close_timeout=CHAIN_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=60),
            retry_policy=MONEY_RETRY,
            summary=f"collect entry fee from {move.player_id}",
        ),
        move.key,
        move.amount,
        money_activity_id("collect", move.key, bound),
        MoneyReceipt,
    )


async def refund_entry(move: MoneyMove, *, bound: bool) -> MoneyReceipt:
    return await _checked(
        lambda activity_id: workflow.execute_activity(
            "refund_entry",  # same activity name on the chain backend
            move,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            activity_id=activity_id,
            start_to_close_timeout=CHAIN_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=60),
            retry_policy=MONEY_RETRY,
            summary=f"refund entry fee to {move.player_id}",
        ),
        move.key,
        move.amount,
        money_activity_id("refund", move.key, bound),
        MoneyReceipt,
    )


async def collect_rake(move: MoneyMove, *, bound: bool) -> MoneyReceipt:
    return await _checked(
        lambda activity_id: workflow.execute_activity(
            "collect_rake",
            move,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            activity_id=activity_id,
            start_to_close_timeout=DB_TIMEOUT,
            retry_policy=MONEY_RETRY,
            summary="collect rake",
        ),
        move.key,
        move.amount,
        money_activity_id("rake", move.key, bound),
        MoneyReceipt,
    )


async def create_payout_intents(intents: list[PrizePayment]) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.create_payout_intents,
        intents,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"create {len(intents)} payout intents",
    )


async def pay_prize(payment: PrizePayment, *, bound: bool) -> PayoutReceipt:
    return await _checked(
        lambda activity_id: workflow.execute_activity(
            "pay_prize",  # same activity name on the chain backend
            payment,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            activity_id=activity_id,
            start_to_close_timeout=CHAIN_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=60),
            retry_policy=PAYOUT_RETRY,
            summary=f"payout #{payment.position}",
        ),
        payment.intent_id,
        payment.amount,
        money_activity_id("payout", payment.intent_id, bound),
        PayoutReceipt,
    )


async def confirm_payout(confirmation: PayoutConfirmation) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.confirm_payout,
        confirmation,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"confirm {confirmation.intent_id}",
    )


async def fail_payout(failure: PayoutFailure) -> None:
    await workflow.execute_activity_method(
        PersistenceActivities.fail_payout,
        failure,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"record failure of {failure.intent_id}",
    )


async def record_transition(transition: LifecycleTransition) -> None:
    await workflow.execute_activity_method(
        TelemetryActivities.record_transition,
        transition,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=5),  # telemetry: best effort, bounded
        summary=f"emit state_transition to {transition.to_state}",
    )


# -- the payout reconciler (workflows/reconciler.py) ------------------------------------------
# A sweep must end (the schedule skips its next ticks while one runs): a fault that outlasts a
# few tries leaves the intent for the next sweep instead of retrying forever like settlement.
SWEEP_PAYOUT_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=10), maximum_attempts=3)


async def due_payouts(query: DuePayoutsQuery) -> list[PrizePayment]:
    return await workflow.execute_activity_method(
        ReconcilerActivities.due_payouts,
        query,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"due payout intents after {query.after or 'the first'}",
    )


async def close_orphaned_settlements(limit: int) -> list[str]:
    """The sweep's last step: close the tournaments whose workflow ended in ``settling`` and
    whose every intent is now paid (``ReconcilerActivities.close_orphaned_settlements``)."""
    return await workflow.execute_activity_method(
        ReconcilerActivities.close_orphaned_settlements,
        limit,
        start_to_close_timeout=DB_TIMEOUT * 3,
        retry_policy=SWEEP_PAYOUT_RETRY,
        summary="close settlements whose workflow ended",
    )


async def redrive_prize(payment: PrizePayment, *, activity_id: str | None) -> PayoutReceipt:
    """The same keyed ``pay_prize`` as settlement's, with the sweep's bounded retries; the
    caller checks the receipt (a sweep does not wait for a good one: the next sweep asks)."""
    return await workflow.execute_activity_method(
        VirtualMoneyActivities.pay_prize,  # same activity name on the chain backend
        payment,
        activity_id=activity_id,
        start_to_close_timeout=CHAIN_TIMEOUT,
        heartbeat_timeout=timedelta(seconds=60),
        retry_policy=SWEEP_PAYOUT_RETRY,
        summary=f"re-drive {payment.intent_id}",
    )


async def record_lifecycle(record: LifecycleRecord) -> None:
    await workflow.execute_activity_method(
        TelemetryActivities.record_lifecycle,
        record,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=5),  # telemetry: best effort, bounded
        summary="record tournament.lifecycle span",
    )


# -- cash rooms ------------------------------------------------------------------------------
async def save_room(row: RoomRow) -> None:
    await workflow.execute_activity_method(
        RoomActivities.save_room,
        row,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"persist room ({row.status}, hand {row.hand_number})",
    )


async def room_buy_in(move: RoomMove) -> MoneyReceipt:
    return await _checked(
        lambda _: workflow.execute_activity(
            "room_buy_in",
            move,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            start_to_close_timeout=DB_TIMEOUT,
            retry_policy=MONEY_RETRY,
            summary=f"reserve room entry from {move.owner_user_id}",
        ),
        move.key,
        move.amount,
        None,  # a room's ledger moves do not heartbeat; the server numbers them
        MoneyReceipt,
    )


async def room_cash_out(move: RoomMove) -> MoneyReceipt:
    # The chips are in the seat's account by construction: only a fault can delay this, and a
    # stack must always go home, so no attempt limit.
    return await _checked(
        lambda _: workflow.execute_activity(
            "room_cash_out",
            move,
            result_type=RawValue,  # opened by _checked: a refused one is resent
            start_to_close_timeout=DB_TIMEOUT,
            retry_policy=PAYOUT_RETRY,
            summary=f"return {move.amount} to {move.owner_user_id}",
        ),
        move.key,
        move.amount,
        None,  # a room's ledger moves do not heartbeat; the server numbers them
        MoneyReceipt,
    )


async def settle_room_hand(hand: RoomHandInput) -> None:
    await workflow.execute_activity_method(
        RoomActivities.settle_room_hand,
        hand,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=PAYOUT_RETRY,
        summary=f"settle hand {hand.hand_no}",
    )


async def publish_room_events(events: list[EventInput]) -> None:
    # Local: one marker event per batch instead of an activity's three, since a room publishes
    # after every action.
    await workflow.execute_local_activity_method(
        RoomActivities.publish_events,
        events,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"publish {len(events)} room event(s)",
    )


async def publish_table(publication: TablePublication) -> None:
    # Local: one marker event per batch, in the workflow task that made the state, so the
    # store holds it before that task's Update answers go out (read-your-writes).
    await workflow.execute_local_activity_method(
        ReadModelActivities.publish_table,
        publication,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary="publish table state",
    )


async def stream_status(query: StreamQuery) -> StreamStatus:
    return await workflow.execute_local_activity_method(
        RoomActivities.stream_status,
        query,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"is {query.player_id}'s stream open?",
    )


async def seconds_since_seen(query: SeenQuery) -> float | None:
    return await workflow.execute_local_activity_method(
        RoomActivities.seconds_since_seen,
        query,
        start_to_close_timeout=DB_TIMEOUT,
        retry_policy=FOREVER,
        summary=f"is {query.player_id} connected?",
    )
