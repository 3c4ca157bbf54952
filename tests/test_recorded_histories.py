"""The regression set: five histories from worker-kill drills that the old code wrote and no
code can replay, and why (tests/histories/worker-kill-2026-12-01/README.md).

In each, a worker died holding a workflow task and the worker that took over applied that
task's inputs in two steps, the first with an older clock, while the history records them as
one task. A replay hands the workflow every input of a task at once (signals and Updates
first) with the task's own clock, so the recorded decisions are ones a replay cannot make:
they are unrecoverable by design, not by a bug a fix could undo. What this file proves:

- each recording shows that two-step application in its own events (the checks below);
- today's workflow code refuses each one loudly (a failed workflow task, never a silent wrong
  state), so an operator sees it (docs/operations.md says how to recover);
- the same scenarios played by today's code replay even when two tasks are merged that way
  (tests/integration/test_interleavings.py) and under worker kills (tests/drills).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory

from core.settings import Settings
from core.temporal import data_converter
from worker import build_replayer

HERE = Path(__file__).parent / "histories" / "worker-kill-2026-12-01"
RECORDED = {
    "run-a/tournament-13dee7e27e-01a230b6.json": 369,
    "run-a/tournament-2b6d406cb9-01a230b6.json": 419,
    "run-b/table-4609e91a4e-1-01a230a1.json": 359,
    "run-b/table-62f3f88dea-1-01a230a0.json": 943,
    "run-b/tournament-0df32cae00-01a2309f.json": 446,
}
"""Each file, with the event at which the code that wrote it stopped replaying it."""


def events(name: str) -> list[dict[str, Any]]:
    return list(json.loads((HERE / name).read_text())["events"])


def attrs(event: dict[str, Any]) -> dict[str, Any]:
    return next((v for k, v in event.items() if k.endswith("Attributes")), {})


def at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00")).timestamp()


def taken_over(evs: list[dict[str, Any]], before: int) -> tuple[int, list[dict[str, Any]]]:
    """The last task started after a schedule-to-start timeout before event ``before``: its
    started event id, and its inputs (every event since the previous completed task)."""
    timeout = max(
        int(e["eventId"])
        for e in evs
        if int(e["eventId"]) < before and e["eventType"].endswith("WORKFLOW_TASK_TIMED_OUT")
    )
    assert attrs(evs[timeout - 1])["timeoutType"] == "TIMEOUT_TYPE_SCHEDULE_TO_START"
    started = next(
        int(e["eventId"])
        for e in evs[timeout:]
        if e["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_STARTED"
    )
    last_completed = max(
        int(e["eventId"])
        for e in evs[: started - 1]
        if e["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_COMPLETED"
    )
    return started, evs[last_completed : started - 1]


def commands_after(evs: list[dict[str, Any]], started: int) -> list[str]:
    out = []
    for e in evs[started + 1 :]:  # after the task's completed event
        if e["eventType"].startswith("EVENT_TYPE_WORKFLOW_TASK"):
            break
        out.append(e["eventType"].removeprefix("EVENT_TYPE_"))
    return out


async def decoded(run: str, payload: dict[str, Any]) -> Any:
    codec = data_converter(Settings(data_dir=HERE / run, codec_key="")).payload_codec
    assert codec is not None
    sealed = Payload(
        metadata={k: base64.b64decode(v) for k, v in payload["metadata"].items()},
        data=base64.b64decode(payload["data"]),
    )
    return json.loads((await codec.decode([sealed]))[0].data)


@pytest.mark.parametrize("name", sorted(RECORDED))
async def test_todays_code_refuses_the_recording_loudly(name: str) -> None:
    run = name.split("/")[0]
    history = WorkflowHistory.from_json(Path(name).stem, (HERE / name).read_text())
    # Recorded before payloads were bound to their workflow: the migration switch opens them.
    old = Settings(data_dir=HERE / run, codec_key="", codec_accept_unbound=True)
    replayer = build_replayer(data_converter(old))
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    # Today's commands differ from the old code's from the first hand or level on (a deck
    # draw now carries its time, a level is one alarm): the workflow task fails, visibly,
    # instead of a replay that wanders into a different state.
    assert result.replay_failure is not None


@pytest.mark.parametrize(
    "name",
    ["run-a/tournament-13dee7e27e-01a230b6.json", "run-a/tournament-2b6d406cb9-01a230b6.json"],
)
def test_level_recorded_before_a_hand_report_that_the_same_task_carried(name: str) -> None:
    """The task holds the level timer's firing and a hand report; the recording changed the
    level first (a search-attribute upsert, then its persistence). A replay delivers the
    signal before the timer, and the code that wrote it then took the hand first."""
    evs = events(name)
    started, inputs = taken_over(evs, RECORDED[name])
    kinds = [e["eventType"] for e in inputs]
    assert "EVENT_TYPE_TIMER_FIRED" in kinds
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED" in kinds
    signal = next(e for e in inputs if e["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED")
    assert attrs(signal)["signalName"] == "hand_completed"
    assert commands_after(evs, started)[:2] == [
        "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES",
        "ACTIVITY_TASK_SCHEDULED",
    ]
    assert started + 2 == RECORDED[name]  # exactly where the old code's replay parted


async def test_an_action_for_a_turn_that_only_the_timeout_created() -> None:
    """The task applied seat 3's timeout (turn 21 → 22) and accepted seat 4's check for turn
    22 in the same task: seat 4 could only have seen turn 22 if the timeout was applied (and
    shown to a query) before the task's Update arrived. A replay gets both at once, the
    Update first, when the table is still at turn 21."""
    name = "run-b/table-4609e91a4e-1-01a230a1.json"
    evs = events(name)
    started, inputs = taken_over(evs, RECORDED[name])
    assert [e["eventType"] for e in inputs if e["eventType"] == "EVENT_TYPE_TIMER_FIRED"]
    accepted = evs[started + 1]
    assert accepted["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"
    act = await decoded("run-b", attrs(accepted)["acceptedRequest"]["input"]["args"]["payloads"][0])
    before = max(
        (e for e in evs[: started - 1] if e["eventType"].endswith("UPDATE_COMPLETED")),
        key=lambda e: int(e["eventId"]),
    )
    answer = await decoded("run-b", attrs(before)["outcome"]["success"]["payloads"][0])
    assert answer["turn"] == 21  # the table waited on turn 21 when the worker died
    assert act["turn"] == 22  # the accepted action answers the turn after its timeout


def test_a_timer_armed_with_an_older_tasks_clock() -> None:
    """The task that took over started after the level deadline, yet armed a 22.127 s timer
    for it: deadline minus the start of the task *before*, the clock it was applied with. A
    replay reads this task's clock, finds the deadline passed, and arms none."""
    name = "run-b/tournament-0df32cae00-01a2309f.json"
    evs = events(name)
    started, _ = taken_over(evs, RECORDED[name])
    timer = evs[RECORDED[name] - 1]
    assert timer["eventType"] == "EVENT_TYPE_TIMER_STARTED"
    seconds = float(attrs(timer)["startToFireTimeout"].removesuffix("s"))
    # The level deadline: the previous level timer's start task clock plus its duration.
    previous = max(
        (e for e in evs[: started - 1] if e["eventType"] == "EVENT_TYPE_TIMER_STARTED"),
        key=lambda e: int(e["eventId"]),
    )
    armed_by = evs[int(attrs(previous)["workflowTaskCompletedEventId"]) - 2]  # its task's start
    deadline = at(armed_by) + float(attrs(previous)["startToFireTimeout"].removesuffix("s"))
    assert at(evs[started - 1]) > deadline  # this task started after the deadline
    starts = [
        at(e) for e in evs[: started - 1] if e["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_STARTED"
    ]
    assert abs((deadline - seconds) - starts[-1]) < 0.005  # = deadline - the previous start
