"""One decision timer per hand (``decision-timer-kept-v1``, issue 30), on real Temporal servers.

A decision taken before the hand's timer fires leaves it running; when it fires for a
decision that is over, the table arms it again for the time the decision in progress has
left. So a table's history holds about one timer per hand (plus one per firing), not a start
and a cancel per action, while every player is still timed out at their own deadline.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.integration.bots import play
from tests.integration.test_interleavings import replay_every_merge
from tests.integration.test_table import quiet_length, start, table_state
from tests.interleave import mergeable, merged, split
from tests.replay import histories_from
from wire.table_messages import ActInput, TableResult, TableSeat
from worker import build_replayer
from workflows.table import TableWorkflow

E = EventType


def _timer_seconds(event: HistoryEvent) -> float:
    return event.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta().total_seconds()


def _acts(events: list[HistoryEvent]) -> int:
    return sum(
        1
        for e in events
        if e.event_type == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
        and e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        == "act"
    )


async def test_a_table_starts_one_decision_timer_per_hand_not_one_per_action(
    client: Client, worker: Worker, task_queue: str
) -> None:
    """Four whole hands of quick players: four decision timers started (none fired, none
    restarted per action), and the table's events per accepted action drop by the two a
    re-armed timer cost each action (started, cancelled)."""
    players = ["a", "b", "c"]
    # actionTimeoutSeconds 30: nobody is timed out. The pause (its timer) is 0.1 s.
    handle = await start(client, task_queue, table_state(players, stack=100_000, pause_ms=100))
    await play(client, handle.id, players, until=lambda v: v.hand_no >= 5)
    await quiet_length(handle)
    events = [e async for e in handle.fetch_history_events()]
    # Whole hands: up to the fourth hand's pause (its timer starts once the hand is over).
    pauses = [
        n
        for n, e in enumerate(events)
        if e.event_type == E.EVENT_TYPE_TIMER_STARTED and _timer_seconds(e) < 1
    ]
    events = events[: pauses[3] + 1]
    decision_timers = [
        e for e in events if e.event_type == E.EVENT_TYPE_TIMER_STARTED and _timer_seconds(e) == 30
    ]
    cancelled = sum(1 for e in events if e.event_type == E.EVENT_TYPE_TIMER_CANCELED)
    fired = sum(
        1
        for e in events
        if e.event_type == E.EVENT_TYPE_TIMER_FIRED
        and e.timer_fired_event_attributes.started_event_id in {d.event_id for d in decision_timers}
    )
    acts = _acts(events)
    print(
        f"\n{len(events)} table events, {acts} accepted actions over 4 whole hands:"
        f" {len(events) / acts:.2f} events per accepted action;"
        f" {len(decision_timers)} decision timers started, {cancelled} cancelled"
    )
    assert acts >= 4 * 3  # each hand at least one action per player
    assert fired == 0
    assert len(decision_timers) == 4  # one per hand (before: one per action)
    assert cancelled == 4  # each hand's end cancels its kept timer
    await handle.signal(TableWorkflow.stop)
    assert sum((await handle.result()).stacks.values()) == 300_000


async def _hand_started(handle: WorkflowHandle[Any, TableResult]) -> tuple[TableSeat, TableSeat]:
    """The heads-up table's button (first to act pre-flop) and big blind, once hand 1 is
    dealt."""
    view = await handle.query(TableWorkflow.view, None)
    while view.hand is None:
        view = await handle.query(TableWorkflow.view, None)
    button = next(s for s in view.seats if s.seat == view.hand["actor"])
    return button, next(s for s in view.seats if s.seat != button.seat)


async def _act(handle: WorkflowHandle[Any, TableResult], seat: TableSeat, action: str) -> None:
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["actor"] == seat.seat
    await handle.execute_update(
        TableWorkflow.act,
        ActInput(
            player_id=seat.player_id, action=action, hand_no=view.hand_no, turn=view.hand["turn"]
        ),
    )


def _fired_ms(events: list[HistoryEvent]) -> list[int]:
    return [
        e.event_time.ToMilliseconds() for e in events if e.event_type == E.EVENT_TYPE_TIMER_FIRED
    ]


async def test_a_player_after_quick_decisions_is_timed_out_at_their_own_deadline(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """The button acts 4 s into the hand; the hand's timer (10 s, armed at the button's
    decision) fires at 10 s, for a decision that is over: the big blind, whose own deadline
    is 14 s, is not timed out then but at 14 s (their option, so the timeout checks). After
    the flop the second timeout in a row folds them and sits them out, as before."""
    client, task_queue = skipping
    handle = await start(
        client, task_queue, table_state(["a", "b"], pause_ms=60_000, actionTimeoutSeconds=10)
    )
    button, sleeper = await _hand_started(handle)
    await time_skipping_env.sleep(timedelta(seconds=4))
    await _act(handle, button, "call")
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["actor"] == sleeper.seat
    deadline, turn = view.deadline_ms, view.hand["turn"]
    assert deadline is not None

    # 11 s in: the hand's timer fired (for the button's decision) and was armed again.
    await time_skipping_env.sleep(timedelta(seconds=7))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["turn"] == turn, view.hand["actions"][-1]
    assert view.deadline_ms == deadline
    assert len(_fired_ms([e async for e in handle.fetch_history_events()])) == 1

    # 15 s in: past the big blind's own deadline, the timeout checked for them.
    await time_skipping_env.sleep(timedelta(seconds=4))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    first = view.hand["actions"][-1]
    assert (first["seat"], first["action"], first["auto"]) == (sleeper.seat, "check", "timeout")
    fired = _fired_ms([e async for e in handle.fetch_history_events()])
    assert len(fired) == 2
    assert fired[0] < deadline - 3_000  # the first firing was the button's 10 s
    assert deadline <= fired[1] < deadline + 1_000  # the timeout came at the sleeper's own

    # The second in a row folds (a check is legal) and sits the player out.
    await time_skipping_env.sleep(timedelta(seconds=11))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand_no == 1 and view.hand["over"]
    second = view.hand["actions"][-1]
    assert (second["seat"], second["action"], second["auto"]) == (sleeper.seat, "fold", "timeout")
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.sitting_out and seat_now.stack == 1000 - 20
    await handle.signal(TableWorkflow.stop)
    result = await handle.result()
    assert result.auto_folds == 1 and sum(result.stacks.values()) == 2000


async def test_a_firing_for_an_earlier_decision_merged_with_an_action_replays(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """The hand's timer, armed at the button's decision, fires while the flop's first
    decision runs (the big blind checked at 8 s); the history is rewritten so that the
    firing reaches the table in the same task as the big blind's check (what a worker that
    died holding that task leaves, tests/interleave.py). The table then takes the check
    first, drops the spent timer and arms a new one at the next decision, the very command
    the recorded run issued when the firing came alone: the rewrite replays, and so does
    every other mergeable pair of the history."""
    client, task_queue = skipping
    handle = await start(
        client, task_queue, table_state(["a", "b"], pause_ms=60_000, actionTimeoutSeconds=10)
    )
    button, sleeper = await _hand_started(handle)
    await time_skipping_env.sleep(timedelta(seconds=4))
    await _act(handle, button, "call")
    await time_skipping_env.sleep(timedelta(seconds=4))
    await _act(handle, sleeper, "check")  # 8 s: the flop, the big blind to act
    await time_skipping_env.sleep(timedelta(seconds=4))  # 12 s: the 10 s timer fired
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    assert not any(a.get("auto") for a in view.hand["actions"])  # nobody was timed out
    await handle.signal(TableWorkflow.stop)
    assert sum((await handle.result()).stacks.values()) == 2000

    (history,) = [
        h for h in await histories_from(client, [handle.id]) if h.workflow_id == handle.id
    ]
    _, tasks, _ = split(json.loads(history.to_json())["events"])
    firing = [
        k
        for k, task in enumerate(tasks)
        if any(e["eventType"] == "EVENT_TYPE_TIMER_FIRED" for e in task.inputs)
    ]
    assert firing, "the hand's timer never fired"
    k = firing[0]
    assert mergeable(tasks, k), "the check's task and the firing's are not adjacent"
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    assert (
        await replayer.replay_workflow(history, raise_on_replay_failure=False)
    ).replay_failure is None
    result = await replayer.replay_workflow(merged(history, k), raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
    _, failures = await replay_every_merge(client, [history])
    assert failures == []
