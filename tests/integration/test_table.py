"""TableWorkflow on a real Temporal server: full hands, refusals, timeouts, continue-as-new."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from db.engine import Database
from domain.fairness import opens
from tests.integration.bots import passive, play, shove
from tests.integration.helpers import set_stream
from tests.interleave import COMMAND_EVENTS
from tests.test_golden_histories import patch_markers
from wire.table_messages import ActInput, SitInInput, TableResult, TableSeat, TableState
from workflows.table import HANDS_PER_RUN, TableWorkflow

SETTINGS: dict[str, Any] = {
    "seats": 6,
    "entryFee": 100,
    "startingStack": 1000,
    "blindStructure": {
        "startingSmallBlind": 10,
        "increaseFactor": 1.5,
        "levelDurationSeconds": 600,
    },
    "actionTimeoutSeconds": 30,
}


async def quiet_length(handle: WorkflowHandle[Any, Any]) -> int:
    """The history's length once its last workflow task completed and nothing was added for
    a moment (a local activity's task may complete after a query already shows its work; the
    task's command events follow its completion)."""
    task_events = (
        EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    )
    last = -1
    for _ in range(100):
        events = [e async for e in handle.fetch_history_events()]
        tasks = [e.event_type for e in events if e.event_type in task_events]
        done = tasks[-1] == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        if done and len(events) == last:
            return last
        last = len(events)
        await asyncio.sleep(0.3)
    raise AssertionError("the history never went quiet")


def table_state(
    players: list[str], stack: int = 1000, *, pause_ms: int = 0, **settings: Any
) -> TableState:
    return TableState(
        table_id=f"table-test-{uuid.uuid4().hex[:8]}",
        tournament_id=None,
        parent_workflow_id=None,
        seat_count=6,
        settings={**SETTINGS, **settings},
        play_start_ms=int(time.time() * 1000),
        seats=[TableSeat(seat=i, player_id=p, stack=stack) for i, p in enumerate(players)],
        hand_pause_ms=pause_ms,
    )


async def start(
    client: Client, task_queue: str, st: TableState
) -> WorkflowHandle[Any, TableResult]:
    return await client.start_workflow(TableWorkflow.run, st, id=st.table_id, task_queue=task_queue)


async def test_shoving_bots_play_to_one_winner_with_chips_conserved(
    client: Client, worker: Worker, task_queue: str
) -> None:
    players = ["p0", "p1", "p2"]
    handle = await start(client, task_queue, table_state(players, stack=300))
    await play(client, handle.id, players, shove)
    result = await handle.result()
    assert sum(result.stacks.values()) == 900
    assert sorted(result.stacks.values()) == [0, 0, 900]
    assert result.hands_played >= 1


async def test_refusals_are_coded_and_leave_no_history(
    client: Client, worker: Worker, task_queue: str
) -> None:
    handle = await start(client, task_queue, table_state(["a", "b"]))
    view = await handle.query(TableWorkflow.view, "a")
    while view.hand is None:
        view = await handle.query(TableWorkflow.view, "a")
    actor = "a" if view.hand["legal"] else "b"
    other = "b" if actor == "a" else "a"
    view = await handle.query(TableWorkflow.view, actor)
    turn = view.hand["turn"]
    # The deal's own publication may still be writing its task's events after the view
    # shows the hand: count from a quiet history, so only the refusals could add events.
    before = await quiet_length(handle)

    async def refused(inp: ActInput) -> ApplicationError:
        with pytest.raises(WorkflowUpdateFailedError) as info:
            await handle.execute_update(TableWorkflow.act, inp)
        assert isinstance(info.value.cause, ApplicationError)
        return info.value.cause

    base = {"hand_no": view.hand_no, "turn": turn}
    assert (
        await refused(ActInput(player_id=other, action="check", **base))
    ).type == "not_your_turn"
    assert (
        await refused(ActInput(player_id="ghost", action="fold", **base))
    ).type == "unknown_seat"
    stale = ActInput(player_id=actor, action="call", hand_no=view.hand_no, turn=turn + 1)
    assert (await refused(stale)).type == "stale_turn"
    small = ActInput(player_id=actor, action="raise", amount=21, **base)
    assert (await refused(small)).type == "amount_out_of_range"
    assert (
        await refused(ActInput(player_id=actor, action="check", **base))
    ).type == "illegal_action"
    after = await quiet_length(handle)
    # Nothing the refusals did is in history. The server may still persist the speculative
    # workflow task a refused Update ran in (an empty task: scheduled, started, completed, no
    # command), as CI saw twice (35 events for 32); anything else is a failure.
    added = [e.event_type async for e in handle.fetch_history_events()][before:after]
    empty_task = [
        EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    ]
    assert len(added) % 3 == 0 and added == empty_task * (len(added) // 3), added
    assert len(added) <= 3 * 5  # at most one per refusal
    updates = [
        e.event_type
        async for e in handle.fetch_history_events()
        if e.event_type
        in (
            EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
            EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        )
    ]
    assert updates == []

    ok = await handle.execute_update(
        TableWorkflow.act, ActInput(player_id=actor, action="call", **base)
    )
    assert ok.turn == turn + 1
    await handle.signal(TableWorkflow.stop)
    result = await handle.result()
    assert sum(result.stacks.values()) == 2000 and result.aborted_hand == 1


async def test_viewers_see_only_their_own_hole_cards_and_the_shown_cards_open_after(
    client: Client, worker: Worker, task_queue: str
) -> None:
    handle = await start(client, task_queue, table_state(["a", "b", "c"]))
    view = await handle.query(TableWorkflow.view, "a")
    while view.hand is None:
        view = await handle.query(TableWorkflow.view, "a")
    cards = {p["seat"]: p["hole_cards"] for p in view.hand["players"]}
    assert cards[0] is not None and len(cards[0]) == 2
    assert cards[1] is None and cards[2] is None
    spectator = await handle.query(TableWorkflow.view, None)
    assert all(p["hole_cards"] is None for p in spectator.hand["players"])
    assert view.deck_commitment and "deck_seed" not in str(view.hand)

    after = await play(
        client, handle.id, ["a", "b", "c"], passive, until=lambda v: v.last_hand is not None
    )
    last = after.last_hand
    assert last is not None and last["hand_no"] == 1
    assert last["deck_commitment"] == view.deck_commitment == last["deck"]["root"]
    assert "deck_seed" not in last  # the secret would show every folded hand
    revealed = last["deck"]["revealed"]
    assert revealed and all(opens(last["deck"]["root"], item) for item in revealed)
    assert {i["card"] for i in revealed} >= set(last["board"])
    await handle.signal(TableWorkflow.stop)
    await handle.result()


@pytest.mark.slow
async def test_continue_as_new_between_hands_keeps_playing(
    client: Client, worker: Worker, task_queue: str
) -> None:
    players = ["a", "b"]
    handle = await start(client, task_queue, table_state(players, stack=100_000))
    first_run = (await handle.describe()).run_id
    view = await play(
        client, handle.id, players, passive, until=lambda v: v.hand_no > HANDS_PER_RUN
    )
    # The first hand of the second run: the previous run's last hand is still shown.
    assert view.last_hand is not None and view.last_hand["hand_no"] == view.hand_no - 1
    view = await play(
        client, handle.id, players, passive, until=lambda v: v.hand_no > HANDS_PER_RUN + 2
    )
    assert view.hand_no > HANDS_PER_RUN
    latest = client.get_workflow_handle(handle.id)
    assert (await latest.describe()).run_id != first_run
    events = len(
        [
            e
            async for e in client.get_workflow_handle(
                handle.id, run_id=first_run
            ).fetch_history_events()
        ]
    )
    assert events < 10_000
    await latest.signal(TableWorkflow.stop)
    result: TableResult = await client.get_workflow_handle_for(
        TableWorkflow.run, handle.id
    ).result()
    assert sum(result.stacks.values()) == 200_000


async def test_timeouts_check_or_fold_then_sit_out(
    time_skipping_env: WorkflowEnvironment, table_activities: list[Any]
) -> None:
    # The worker runs on its own runtime with a metric buffer, to read the auto-fold counter.
    buffer = MetricBuffer(1000)
    client = time_skipping_env.client
    metered = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=client.data_converter,
        runtime=Runtime(telemetry=TelemetryConfig(metrics=buffer)),
    )
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with Worker(
        metered, task_queue=task_queue, workflows=[TableWorkflow], activities=table_activities
    ):
        handle = await start(
            client, task_queue, table_state(["a", "b"], pause_ms=1000, actionTimeoutSeconds=5)
        )
        # Nobody ever acts: the clock skips through the decision timers.
        for _ in range(40):
            await time_skipping_env.sleep(timedelta(seconds=6))
            view = await handle.query(TableWorkflow.view, None)
            if view.hand_no >= 3 and all(s.sitting_out for s in view.seats):
                break
        assert view.hand_no >= 3
        assert all(s.sitting_out for s in view.seats)
        assert sum(s.stack for s in view.seats) == 2000
        await handle.signal(TableWorkflow.stop)
        result = await handle.result()
        assert result.auto_folds >= 1
        assert sum(result.stacks.values()) == 2000
    folds = sum(u.value for u in buffer.retrieve_updates() if u.metric.name == "sng_auto_folds")
    assert folds == result.auto_folds


async def test_a_second_timeout_in_a_row_folds_even_where_checking_is_legal(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """Seed 004, "Decision timeouts": the first timeout checks if it can, the second in a row
    folds and sits the player out, whether or not a check was legal (issue 28)."""
    client, task_queue = skipping
    handle = await start(
        client, task_queue, table_state(["a", "b"], pause_ms=60_000, actionTimeoutSeconds=5)
    )
    view = await handle.query(TableWorkflow.view, None)
    while view.hand is None:
        view = await handle.query(TableWorkflow.view, None)
    # Heads-up the button posts the small blind and acts first pre-flop; the big blind is
    # the one who times out.
    button = next(s for s in view.seats if s.seat == view.hand["actor"])
    sleeper = next(s for s in view.seats if s.seat != button.seat)
    await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=button.player_id, action="call", hand_no=1, turn=view.hand["turn"]),
    )
    # First timeout: the big blind's option, a check is legal, so it checks.
    await time_skipping_env.sleep(timedelta(seconds=6))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    assert view.hand["actor"] == sleeper.seat  # the big blind acts first after the flop
    first = view.hand["actions"][-1]
    assert (first["seat"], first["action"], first["auto"]) == (sleeper.seat, "check", "timeout")
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.timeouts == 1 and not seat_now.sitting_out

    # Second in a row, checking legal again: it folds, and the player sits out.
    await time_skipping_env.sleep(timedelta(seconds=6))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand_no == 1
    second = view.hand["actions"][-1]
    assert (second["seat"], second["action"], second["auto"]) == (sleeper.seat, "fold", "timeout")
    assert view.hand["over"]
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.sitting_out and seat_now.stack == 1000 - 20
    await handle.signal(TableWorkflow.stop)
    result = await handle.result()
    assert result.auto_folds == 1 and sum(result.stacks.values()) == 2000


async def test_an_act_the_timeout_overtook_is_refused_and_changes_nothing(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """Legality once per action (issue 30): the loop applies without a second check only an
    act that still answers the hand and turn the table is at. The big blind's timer runs
    out (the timeout checks for them); their check for that turn, sent after, answers a turn
    the table moved past: refused, coded, and nothing changes (the version, the hand)."""
    client, task_queue = skipping
    handle, sleeper, (hand_no, turn) = await _big_blind_to_act(
        client, task_queue, actionTimeoutSeconds=5
    )
    await time_skipping_env.sleep(timedelta(seconds=6))
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["turn"] == turn + 1
    assert view.hand["actions"][-1]["auto"] == "timeout"
    with pytest.raises(WorkflowUpdateFailedError) as info:
        await handle.execute_update(
            TableWorkflow.act,
            ActInput(player_id=sleeper.player_id, action="check", hand_no=hand_no, turn=turn),
        )
    assert isinstance(info.value.cause, ApplicationError)
    assert info.value.cause.type == "stale_turn"
    # (The time-skipping server writes a task for a refused Update, so the history's length
    # is not the measure here; test_refusals_are_coded_and_leave_no_history checks it.)
    after = await handle.query(TableWorkflow.view, None)
    assert after.version == view.version and after.hand == view.hand
    # The same player's act for the turn the table is at goes through.
    result = await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=sleeper.player_id, action="check", hand_no=hand_no, turn=turn + 1),
    )
    assert result.turn == turn + 2
    await handle.signal(TableWorkflow.stop)
    assert sum((await handle.result()).stacks.values()) == 2000


async def _big_blind_to_act(
    client: Client, task_queue: str, **settings: Any
) -> tuple[WorkflowHandle[Any, TableResult], TableSeat, tuple[int, int]]:
    """A heads-up table whose button has called: the big blind's option is the decision."""
    handle = await start(client, task_queue, table_state(["a", "b"], pause_ms=60_000, **settings))
    view = await handle.query(TableWorkflow.view, None)
    while view.hand is None:
        view = await handle.query(TableWorkflow.view, None)
    button = next(s for s in view.seats if s.seat == view.hand["actor"])
    sleeper = next(s for s in view.seats if s.seat != button.seat)
    await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=button.player_id, action="call", hand_no=1, turn=view.hand["turn"]),
    )
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["actor"] == sleeper.seat
    return handle, sleeper, (view.hand_no, view.hand["turn"])


async def _turn(handle: WorkflowHandle[Any, TableResult]) -> tuple[int, int | None]:
    view = await handle.query(TableWorkflow.view, None)
    return view.hand_no, (view.hand["turn"] if view.hand and not view.hand["over"] else None)


async def test_a_stream_drop_holds_a_tournament_decision_for_the_settings_grace(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment, db: Database
) -> None:
    """Seed 004's disconnect grace at a tournament's table (issue 28): the big blind's stream
    drops as its 5 s decision begins; the table holds the decision until the drop plus the
    settings' ``disconnectGrace`` (30 s), shows it in the seat, and the player, back within
    the grace, checks: the action counts, no timeout."""
    client, task_queue = skipping
    handle, sleeper, turn = await _big_blind_to_act(
        client, task_queue, actionTimeoutSeconds=5, disconnectGrace=30
    )
    await set_stream(db, handle.id, sleeper.player_id, 0)
    await time_skipping_env.sleep(timedelta(seconds=20))
    assert await _turn(handle) == turn
    view = await handle.query(TableWorkflow.view, None)
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.grace_until is not None and seat_now.disconnected_at is not None
    assert seat_now.grace_until == view.deadline_ms
    assert 29_990 <= seat_now.grace_until - seat_now.disconnected_at <= 30_000

    await set_stream(db, handle.id, sleeper.player_id, None)
    result = await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=sleeper.player_id, action="check", hand_no=turn[0], turn=turn[1]),
    )
    assert result.ok
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    check = [x for x in view.hand["actions"] if x.get("seat") == sleeper.seat][-1]
    assert check["action"] == "check" and not check.get("auto")
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.timeouts == 0 and seat_now.grace_until is None
    await handle.signal(TableWorkflow.stop)
    await handle.result()


async def test_past_the_grace_from_the_drop_a_tournament_timeout_applies(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment, db: Database
) -> None:
    """The grace is measured from the drop: a stream down for 20 s when the 5 s decision
    timer runs out holds the decision 10 s more (the drop plus 30 s, ~15 s into the
    decision), not 30 s more; then the timeout rules apply (a free check). (The database's
    clock, which dates the drop, does not skip with the test server's.)"""
    client, task_queue = skipping
    handle, sleeper, turn = await _big_blind_to_act(
        client, task_queue, actionTimeoutSeconds=5, disconnectGrace=30
    )
    await set_stream(db, handle.id, sleeper.player_id, 20)
    await time_skipping_env.sleep(timedelta(seconds=6))
    assert await _turn(handle) == turn  # held past the decision time
    await time_skipping_env.sleep(timedelta(seconds=7))  # 13 s
    assert await _turn(handle) == turn
    await time_skipping_env.sleep(timedelta(seconds=4))  # 17 s: the grace is over
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    timed_out = [x for x in view.hand["actions"] if x.get("seat") == sleeper.seat][-1]
    assert (timed_out["action"], timed_out["auto"]) == ("check", "timeout")
    seat_now = next(s for s in view.seats if s.seat == sleeper.seat)
    assert seat_now.timeouts == 1 and seat_now.grace_until is None
    await handle.signal(TableWorkflow.stop)
    await handle.result()


async def test_a_tournament_player_whose_stream_is_open_gets_no_grace(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment, db: Database
) -> None:
    """Connected (an open stream), just slow: the timeout rules apply at the decision time."""
    client, task_queue = skipping
    handle, sleeper, turn = await _big_blind_to_act(
        client, task_queue, actionTimeoutSeconds=5, disconnectGrace=30
    )
    await set_stream(db, handle.id, sleeper.player_id, None)
    await time_skipping_env.sleep(timedelta(seconds=6))
    assert await _turn(handle) != turn
    await handle.signal(TableWorkflow.stop)
    await handle.result()


async def test_a_tournament_table_waits_for_a_served_sit_in_to_be_taken(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """``deliver-v1`` (docs/durability.md, rule 1): a new tournament table's run, like a room,
    waits until a served sit-in's handler took its answer before it goes on (``Inbox.deliver``),
    so the Update's completion is written before the next command the loop issues, here the
    publication of the seat sitting in again. Its history carries the patch's marker; runs
    from before it answer and go on, and replay so (the v3 golden table)."""
    client, task_queue = skipping
    handle, sleeper, _ = await _big_blind_to_act(client, task_queue, actionTimeoutSeconds=5)
    for _ in range(2):  # two timeouts in a row: the second folds and sits the player out
        await time_skipping_env.sleep(timedelta(seconds=6))
    view = await handle.query(TableWorkflow.view, None)
    assert next(s for s in view.seats if s.seat == sleeper.seat).sitting_out
    # The table now pauses 60 s between hands, where it serves the sit-in.
    await handle.execute_update(TableWorkflow.sit_in, SitInInput(player_id=sleeper.player_id))
    history = await handle.fetch_history()
    assert "deliver-v1" in patch_markers(history.to_json())
    events = history.events
    accepted = next(
        i
        for i, e in enumerate(events)
        if e.HasField("workflow_execution_update_accepted_event_attributes")
        and e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        == "sit_in"
    )
    commands = [
        EventType.Name(e.event_type)
        for e in events[accepted + 1 :]
        if EventType.Name(e.event_type) in COMMAND_EVENTS
    ]
    assert commands[:2] == [
        "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED",
        "EVENT_TYPE_MARKER_RECORDED",  # the publication of the seat, in again
    ], commands[:4]
    await handle.signal(TableWorkflow.stop)
    assert sum((await handle.result()).stacks.values()) == 2000
