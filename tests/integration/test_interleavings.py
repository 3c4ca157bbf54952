"""Forced interleavings: two workflow tasks' inputs recorded as one must still replay.

The fault drills broke replay when a worker died holding a task and its successor applied the
task's inputs in two steps (a timer that fired, then a hand report or an action), while the
history records them as one task (tests/interleave.py says how). These tests play real
tournaments, tables and rooms, then rewrite each history so that every adjacent pair of tasks
whose inputs are of different kinds (a timer and a signal, a timer and an Update, ...) becomes
one task, and replay every rewrite with today's code. Today's workflows decide from state only,
so each rewrite must replay; the code before the fix failed these the way the drills did.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.act_writer import ActWriter
from core.codec import EncryptionCodec
from db import ledger
from db.engine import Database
from tests.integration.bots import passive
from tests.integration.helpers import eventually, start_paid_tournament
from tests.integration.test_table import table_state
from tests.interleave import COMMAND_EVENTS, WFT_COMPLETED, mergeable, merged, mixed_pairs, split
from tests.replay import histories_from
from wire.ids import table_workflow_id
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    PayEntryInput,
    RegisterInput,
    TournamentView,
    UnregisterInput,
)
from wire.signals import HAND_COMPLETED
from wire.table_messages import ActInput, HandReport, TableState, report_mac
from worker import WORKFLOWS, activities_for, build_replayer, build_worker, single_batch
from workflows.table import TableWorkflow
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow

ACTIVITY_SCHEDULED = "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"


def _dump(history: WorkflowHistory, k: int) -> None:
    """SNG_DUMP_MERGES=<dir> keeps each rewrite that failed, with its original, to study."""
    if folder := os.environ.get("SNG_DUMP_MERGES"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        name = f"{history.workflow_id}-{k}"
        Path(folder, f"{name}.json").write_text(merged(history, k).to_json())
        Path(folder, f"{name}.orig.json").write_text(history.to_json())


async def replay_every_merge(client: Client, found: list[WorkflowHistory]) -> tuple[int, list[str]]:
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    merges, failures = 0, []
    for history in found:
        assert (
            await replayer.replay_workflow(history, raise_on_replay_failure=False)
        ).replay_failure is None
        for k in mixed_pairs(history):
            merges += 1
            result = await replayer.replay_workflow(
                merged(history, k), raise_on_replay_failure=False
            )
            if result.replay_failure is not None:
                _dump(history, k)
                failures.append(
                    f"{history.workflow_id} tasks {k - 1}+{k}: {str(result.replay_failure)[:240]}"
                )
    return merges, failures


async def test_tournament_level_deadlines_overlapping_hand_reports(
    skipping: tuple[Client, str], db: Database
) -> None:
    """Nobody acts: decision timers, level deadlines and hand reports overlap all the way."""
    client, task_queue = skipping
    tid = f"merge-{uuid.uuid4().hex[:6]}"
    settings = {
        "seats": 3,
        "entryFee": 100,
        "startingStack": 300,
        "actionTimeoutSeconds": 20,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 30,
        },
    }
    handle = await start_paid_tournament(client, db, task_queue, tid, settings, hand_pause_ms=7_000)
    final = await handle.result()
    assert final.state == "closed" and final.current_level >= 3

    found = await histories_from(client, [handle.id])
    assert {h.workflow_id for h in found} == {handle.id, f"table-{tid}-1"}
    merges, failures = await replay_every_merge(client, found)
    assert merges >= 10, f"only {merges} overlapping pairs: the scenario no longer overlaps"
    assert failures == []


async def test_table_actions_overlapping_decision_timeouts(skipping: tuple[Client, str]) -> None:
    """Two players act, one only times out: actions arrive right after timeouts."""
    client, task_queue = skipping
    st = table_state(["a", "b", "c"], stack=400, pause_ms=0, actionTimeoutSeconds=5)
    handle = await client.start_workflow(
        TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
    )

    async def act_for(players: list[str]) -> None:
        while True:
            view = await handle.query(TableWorkflow.view, players[0])
            if view.finished or view.hand_no > 6:
                return
            for player in players:
                view = await handle.query(TableWorkflow.view, player)
                legal: dict[str, Any] | None = view.hand.get("legal") if view.hand else None
                if legal:
                    action, amount = passive(legal)
                    try:
                        await handle.execute_update(
                            TableWorkflow.act,
                            ActInput(
                                player_id=player,
                                hand_no=view.hand_no,
                                turn=view.hand["turn"],
                                action=action,
                                amount=amount,
                            ),
                        )
                    except Exception:
                        pass
            await asyncio.sleep(0.05)

    await asyncio.wait_for(act_for(["a", "b"]), timeout=120)
    await handle.signal(TableWorkflow.stop)
    result = await handle.result()
    assert sum(result.stacks.values()) == 1200

    found = await histories_from(client, [handle.id])
    _, failures = await replay_every_merge(client, found)
    # Since tables publish their state at each decision (docs/read-model.md), a task that
    # starts a decision records a command (the publication's marker) before the next task's
    # Update could be accepted, and tests/interleave.py refuses to merge such pairs (it only
    # builds recordings a worker could write, and does not reorder acceptances). What is left
    # to merge here is a stop that came right after a deal, when the timing gives one; the
    # Update-after-timeout overlaps at tables are covered by the worker-kill and two-worker
    # drills, which end with a replay of every history (tests/drills).
    assert failures == []


async def _stop_right_after(
    client: Client, db: Database, task_queue: str, scenario: str
) -> WorkflowHistory:
    """A table that gets a stop in the task right after one input of ``scenario``'s kind:
    a decision's timeout mid-hand, an action mid-hand, or an action that ends the hand
    (then a deck draw, or with ``pause_ms`` a pause, is what that task started).

    The table's worker runs no activities of its own (only its local ones); a second worker
    runs them, and for ``fold-then-deal`` it is away from the fold until the stop, so the
    next hand's deck draw waits and the stop lands while it does."""
    three = scenario in ("timeout", "action")
    players = ["a", "b", "c"] if three else ["a", "b"]
    st = table_state(
        players,
        stack=400,
        pause_ms=2_000 if scenario == "fold-then-pause" else 0,
        actionTimeoutSeconds=3,
    )

    def activity_worker() -> Worker:
        codec = client.data_converter.payload_codec
        assert isinstance(codec, EncryptionCodec)
        return Worker(client, task_queue=task_queue, activities=activities_for(db, codec=codec))

    async with build_worker(client, db, task_queue, no_remote_activities=True):
        async with activity_worker():
            handle = await client.start_workflow(
                TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
            )

            async def to_act() -> tuple[str, Any]:
                """The player to act, and their view, once a decision is awaited."""
                while True:
                    for p in players:
                        view = await handle.query(TableWorkflow.view, p)
                        if view.hand and view.hand.get("legal") and view.deadline_ms:
                            return p, view
                    await asyncio.sleep(0.02)

            actor, view = await to_act()
        async with contextlib.AsyncExitStack() as activities:
            if scenario != "fold-then-deal":
                await activities.enter_async_context(activity_worker())
            if scenario == "timeout":
                turn = view.hand["turn"]

                async def turn_now() -> Any:
                    hand = (await handle.query(TableWorkflow.view, None)).hand
                    return hand and hand["turn"]

                while await turn_now() == turn:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            else:
                action = "call" if scenario == "action" else "fold"
                await handle.execute_update(
                    TableWorkflow.act,
                    ActInput(
                        player_id=actor,
                        hand_no=view.hand_no,
                        turn=view.hand["turn"],
                        action=action,
                    ),
                )
            await handle.signal(TableWorkflow.stop)
            if scenario == "fold-then-deal":
                # The draw's worker comes back only once the stop's task is written (a table
                # that waits for the draw before it reads the stop needs it to go on).
                await _task_after_signal(handle)
                await activities.enter_async_context(activity_worker())
            result = await handle.result()
    assert sum(result.stacks.values()) == 400 * len(players)
    (history,) = [h for h in await histories_from(client, [handle.id])]
    return history


async def _task_after_signal(handle: WorkflowHandle[Any, Any]) -> None:
    """Until a workflow task completed after the workflow's (one) signal."""
    while True:
        kinds = [e.event_type async for e in handle.fetch_history_events()]
        signaled = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        if (
            signaled in kinds
            and EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED in kinds[kinds.index(signaled) :]
        ):
            return
        await asyncio.sleep(0.05)


PREVIOUS = {
    # What the task before the stop must have taken and started, for each scenario.
    "timeout": ("EVENT_TYPE_TIMER_FIRED", "EVENT_TYPE_TIMER_STARTED"),
    # From ``decision-timer-kept-v1`` an action mid-hand starts no timer (the hand's timer
    # runs on): its task completes the Update (the next decision's snapshot in its answer).
    "action": ("update", "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED"),
    # From ``deck-local-v1`` the next hand's draw is a marker in the fold's task, which also
    # begins the hand's first decision: the stop is read there (rule 9).
    "fold-then-deal": ("update", "EVENT_TYPE_MARKER_RECORDED"),
    "fold-then-pause": ("update", "EVENT_TYPE_TIMER_STARTED"),
}


def _stop_task(history: WorkflowHistory, scenario: str) -> int | None:
    """The task that took the stop, if it came alone right after the scenario's input."""
    _, tasks, _ = split(json.loads(history.to_json())["events"])
    found = [
        k
        for k, task in enumerate(tasks)
        if any(e["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED" for e in task.inputs)
    ]
    if len(found) != 1 or found[0] not in mixed_pairs(history):
        return None
    before = tasks[found[0] - 1]
    took, started = PREVIOUS[scenario]
    inputs = {e["eventType"] for e in before.inputs}
    commands = {c["eventType"] for c in before.commands}
    if took == "update":
        inputs.add("update" if "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED" in commands else "")
    return found[0] if took in inputs and started in commands else None


@pytest.mark.parametrize("scenario", list(PREVIOUS))
async def test_table_stop_in_the_task_after_a_timeout_or_an_action(
    client: Client, db: Database, task_queue: str, scenario: str
) -> None:
    """Force-end's stop in the task right after a timeout, an action, or a hand-ending
    action: recorded as one task with that input (a worker that died holding it), the
    table must decide the same, so the stop must not be read before the commands the other
    input led to (docs/durability.md, rule 9). A stop can still race the table's own next
    input, so a run that did not get the wanted order is played again."""
    for _attempt in range(8):
        history = await _stop_right_after(client, db, task_queue, scenario)
        stop = _stop_task(history, scenario)
        if stop is not None:
            break
    else:
        pytest.fail(f"no run put the stop right after the {scenario} in 8 tries")
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    assert (
        await replayer.replay_workflow(history, raise_on_replay_failure=False)
    ).replay_failure is None
    result = await replayer.replay_workflow(merged(history, stop), raise_on_replay_failure=False)
    if result.replay_failure is not None:
        _dump(history, stop)
    assert result.replay_failure is None, str(result.replay_failure)[:400]


async def test_registration_reserves_expiring_among_registers_pays_and_leaves(
    client: Client, worker: Any, db: Database, task_queue: str
) -> None:
    """Players register, pay, leave and come back while 1 s reserves expire around them,
    then an operator cancels: reserve alarms, Updates and money activities overlap."""
    tid = f"merge-reg-{uuid.uuid4().hex[:6]}"
    settings = {
        "seats": 9,
        "entryFee": 100,
        "startingStack": 300,
        "actionTimeoutSeconds": 10,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 60,
        },
    }
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid,
            name=tid,
            settings=settings,
            reserve_seconds=1,
            reregister_cooldown_seconds=0,
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    players = [f"{tid}-{i}" for i in range(8)]
    for user in players:
        await ledger.transfer(
            db,
            key=f"seed-{user}",
            source=ledger.MINT,
            destination=ledger.user_account(user),
            amount=1_000,
        )
    rng = random.Random(7)

    async def attempt(update: Any, arg: Any) -> bool:
        try:
            await handle.execute_update(update, arg)
            return True
        except WorkflowUpdateFailedError:
            return False  # a refusal (an expired reserve, a full field): part of the scenario

    async def churn(user: str) -> None:
        for _ in range(4):
            if not await attempt(
                TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
            ):
                await asyncio.sleep(0.3)
                continue
            await asyncio.sleep(rng.uniform(0.6, 1.4))  # about half the reserves expire first
            paid = await attempt(
                TournamentWorkflow.pay_entry, PayEntryInput(player_id=user, amount=100)
            )
            await asyncio.sleep(rng.uniform(0.0, 0.8))
            if paid or rng.random() < 0.5:
                await attempt(TournamentWorkflow.unregister, UnregisterInput(player_id=user))
            await asyncio.sleep(rng.uniform(0.0, 0.5))

    await asyncio.gather(*(churn(u) for u in players))
    await handle.execute_update(TournamentWorkflow.cancel, CancelInput())
    final = await handle.result()
    assert final.state == "cancelled"
    for user in players:  # every fee came back
        assert await ledger.balance(db, ledger.user_account(user)) == 1_000

    found = await histories_from(client, [handle.id])
    merges, failures = await replay_every_merge(client, found)
    assert failures == []
    assert merges >= 5, f"only {merges} overlapping pairs: the scenario no longer overlaps"


async def history_kinds(handle: WorkflowHandle[Any, Any]) -> list[str]:
    return [EventType.Name(e.event_type) async for e in handle.fetch_history_events()]


def last_task_completed(kinds: list[str]) -> bool:
    """Nothing is waiting for a worker: the history ends with a task's completion or the
    commands it wrote."""
    return kinds[-1] == WFT_COMPLETED or kinds[-1] in COMMAND_EVENTS


async def settled(handle: WorkflowHandle[Any, Any]) -> bool:
    """The workflow's last task completed, and every activity it scheduled finished."""
    kinds = await history_kinds(handle)
    finished = kinds.count("EVENT_TYPE_ACTIVITY_TASK_COMPLETED") + kinds.count(
        "EVENT_TYPE_ACTIVITY_TASK_FAILED"
    )
    return last_task_completed(kinds) and kinds.count(ACTIVITY_SCHEDULED) == finished


async def test_a_level_taken_alone_then_a_report_of_a_hand_that_ended_before_it_replays_merged(
    time_skipping_env: WorkflowEnvironment, db: Database
) -> None:
    """CI-47's pair, forced. The level's timer fires and the tournament takes the level in a
    task of its own; then the table's report of a hand that ended *before* the deadline (the
    signal was on its way) arrives in the next task, while the level's write still runs.
    Recorded as one task (tests/interleave.py), a replay gets both inputs at once: ordering
    them by the hand's end took the hand first, against the level the worker took first.

    The worker here runs the workflows only (no activity runs, so the level's write stays
    open and the report's task has nothing else in it). The report is the one the table
    would send, signed with its secret; the table itself waits on its first decision, whose
    timeout (300 s) lies past the level's deadline (120 s)."""
    client = time_skipping_env.client
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    tid = f"level-alone-{uuid.uuid4().hex[:6]}"
    settings = {
        "seats": 3,
        "entryFee": 100,
        "startingStack": 300,
        "actionTimeoutSeconds": 300,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 120,
        },
    }
    table_id = table_workflow_id(tid)
    # No sticky queue: the next worker takes the tasks at once (a sticky one would wait for
    # the first worker's queue to time out).
    async with build_worker(client, db, task_queue, max_cached_workflows=0):
        handle = await start_paid_tournament(client, db, task_queue, tid, settings, hand_pause_ms=0)

        async def at_rest() -> TournamentView | None:
            view = await handle.query(TournamentWorkflow.state)
            if view.state != "playing" or view.level_ends_at_ms is None:
                return None
            # And both workflows at rest (no activity outstanding: one the next worker cannot
            # run would hold the server's time skipping), the level's timer armed.
            table = client.get_workflow_handle(table_id)
            if await settled(handle) and await settled(table):
                return view
            return None

        playing = await eventually(at_rest, limit=60)
    deadline = playing.level_ends_at_ms
    assert deadline is not None
    first = playing.current_level
    secret = ""
    async for event in client.get_workflow_handle(table_id).fetch_history_events():
        attrs = event.workflow_execution_started_event_attributes
        (start,) = await client.data_converter.decode(attrs.input.payloads)
        secret = TableState.model_validate(start).report_secret
        seats = {s.seat: s.player_id for s in TableState.model_validate(start).seats}
        break
    assert secret

    async def tasks_done() -> int:
        """Events so far, once the last task completed (0 before)."""
        kinds = await history_kinds(handle)
        return len(kinds) if last_task_completed(kinds) else 0

    workflows_only = single_batch(
        Worker(
            client,
            task_queue=task_queue,
            workflows=list(WORKFLOWS),
            interceptors=[ActWriter(db)],
        )
    )
    async with workflows_only:
        now_ms = int((await time_skipping_env.get_current_time()).timestamp() * 1000)
        # Skip to a second before the deadline; the server's clock runs at real pace from
        # there (nothing waits on a result), so the level's write does not hold a skip.
        await time_skipping_env.sleep((deadline - now_ms) / 1000 - 1)

        async def level_two() -> bool:
            return (await handle.query(TournamentWorkflow.state)).current_level == first + 1

        await eventually(level_two, limit=30)
        await eventually(tasks_done, limit=30)
        stacks = {seat: 300 for seat in seats}
        report = HandReport(
            table_id=table_id,
            hand_no=1,
            level=1,
            record={
                "table_id": table_id,
                "hand_no": 1,
                "players": {str(seat): player for seat, player in seats.items()},
                "stacks_before": stacks,
                "stacks_after": stacks,
                "busted": [],
            },
            stacks_after=stacks,
            busted=[],
            auto_folds=0,
            ended_at_ms=deadline - 1_000,
        )
        report.mac = report_mac(secret, HAND_COMPLETED, table_id, 1, report)
        signalled = len([e async for e in handle.fetch_history_events()])
        await handle.signal(HAND_COMPLETED, report)

        async def report_task_done() -> bool:
            return await tasks_done() > signalled + 1

        await eventually(report_task_done, limit=30)
    history = await handle.fetch_history()
    _, tasks, _ = split(json.loads(history.to_json())["events"])
    (k,) = [
        i
        for i, task in enumerate(tasks)
        if any(
            e["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED"
            and e["workflowExecutionSignaledEventAttributes"]["signalName"] == HAND_COMPLETED
            for e in task.inputs
        )
    ]
    assert any(e["eventType"] == "EVENT_TYPE_TIMER_FIRED" for e in tasks[k - 1].inputs)
    assert all(c["eventType"] != ACTIVITY_SCHEDULED for c in tasks[k].commands), (
        "the report's task should only queue it (the level's write is still open)"
    )
    assert mergeable(tasks, k)
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    assert (await replayer.replay_workflow(history)).replay_failure is None
    result = await replayer.replay_workflow(merged(history, k), raise_on_replay_failure=False)
    for wid in (handle.id, table_id):
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(wid).terminate("the test is over")
    assert result.replay_failure is None, str(result.replay_failure)[:400]
