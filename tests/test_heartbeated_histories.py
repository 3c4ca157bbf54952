"""The newest golden histories, rewritten as if every local
activity had outlived its workflow task (sdk-core heartbeats the task: the commands issued
before the local activity complete that task, its marker and what follows it a later one),
must still replay. sdk-core pre-resolves a local activity from a marker anywhere in the same
task and matches markers by sequence number, not position, so a plain replay does not see a
non-LA command moved from before an awaited local activity to after it; split across tasks,
it does ("No command scheduled for event TimerStarted"). Checked by hand: today's code
replays every rewritten v3/v4/v5 table and room; with the pause's flush moved before the pause
timer, the rewritten v3 and v4 tables fail. Does NOT catch the opposite move (a timer
moved ahead of an awaited local activity)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory

from core import deck_vault
from core.settings import Settings
from core.temporal import data_converter
from tests.interleave import _attrs, _refs, split
from tests.test_golden_histories import GOLDEN
from worker import build_replayer


def _is_la(event: dict[str, Any]) -> bool:
    return bool(
        event["eventType"] == "EVENT_TYPE_MARKER_RECORDED"
        and _attrs(event)["markerName"] == "core_local_activity"
    )


def heartbeated(history: WorkflowHistory) -> WorkflowHistory:
    doc = json.loads(history.to_json())
    head, tasks, tail = split(doc["events"])
    order, n = [*head], 0
    for task in tasks:
        cut = next((i for i, c in enumerate(task.commands) if _is_la(c)), None)
        order += [*task.inputs, task.scheduled, task.started, task.completed]
        if cut is None:
            order += task.commands
            continue
        n += 1
        sched, start, done = (
            copy.deepcopy(e) for e in (task.scheduled, task.started, task.completed)
        )
        base = 10_000_000 + 10 * n  # placeholder ids, renumbered below
        sched["eventId"], start["eventId"], done["eventId"] = (
            str(base),
            str(base + 1),
            str(base + 2),
        )
        _attrs(start)["scheduledEventId"] = str(base)
        _attrs(done)["scheduledEventId"], _attrs(done)["startedEventId"] = str(base), str(base + 1)
        _attrs(done).pop("sdkMetadata", None)
        for c in task.commands[cut:]:
            if "workflowTaskCompletedEventId" in _attrs(c):
                _attrs(c)["workflowTaskCompletedEventId"] = str(base + 2)
        order += [*task.commands[:cut], sched, start, done, *task.commands[cut:]]
    order += tail
    renamed = {int(e["eventId"]): i for i, e in enumerate(order, start=1)}
    for e in order:
        for holder, key in _refs(_attrs(e)):
            if int(holder[key]) in renamed:
                holder[key] = str(renamed[int(holder[key])])
        e["eventId"] = str(renamed[int(e["eventId"])])
    doc["events"] = order
    return WorkflowHistory.from_json(history.workflow_id, json.dumps(doc))


@pytest.mark.parametrize("kind", ("table", "room"))
@pytest.mark.parametrize(
    "here", (GOLDEN / "v3", GOLDEN / "v4", GOLDEN / "v5"), ids=lambda p: p.name
)
async def test_a_local_activity_that_outlived_its_task_replays(here: Path, kind: str) -> None:
    wid = (here / f"{kind}.id").read_text().strip()
    history = heartbeated(WorkflowHistory.from_json(wid, (here / f"{kind}.json").read_text()))
    converter = data_converter(Settings(data_dir=here, codec_key="", codec_accept_unbound=True))
    session = deck_vault.current()
    deck_vault.install(deck_vault.DeckVault.from_settings(Settings(data_dir=here, deck_key="")))
    try:
        result = await build_replayer(converter).replay_workflow(
            history, raise_on_replay_failure=False
        )
    finally:
        deck_vault.install(session)
    assert result.replay_failure is None, result.replay_failure
