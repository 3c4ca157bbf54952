"""Force the interleaving the fault drills recorded: two workflow tasks' inputs in one task.

When a worker dies holding a workflow task, the worker that takes over can apply part of the
inputs early (to answer a query, or from an earlier page of history) with an older clock, and
the rest when the task runs; the history records all of them as one task. A replay then hands
the workflow every input at once, signals and Updates first, with the later clock.

``merged(history, k)`` builds exactly that recording from a real history: the inputs of
workflow task ``k`` join those of task ``k - 1``, and the commands of both follow one task
completion, in their order. If the workflow's commands depend only on the inputs it got (and
not on how they were batched, or on the clock), the merged history replays. Pairs where task
``k``'s inputs answer a command of task ``k - 1`` (an activity it scheduled, a timer it
started) cannot be merged and are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from temporalio.client import WorkflowHistory

WFT_SCHEDULED = "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED"
WFT_STARTED = "EVENT_TYPE_WORKFLOW_TASK_STARTED"
WFT_COMPLETED = "EVENT_TYPE_WORKFLOW_TASK_COMPLETED"
# What a worker's task completion writes (commands and protocol messages); everything else
# between two tasks is an input.
COMMAND_EVENTS = {
    "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED",
    "EVENT_TYPE_TIMER_STARTED",
    "EVENT_TYPE_TIMER_CANCELED",
    "EVENT_TYPE_MARKER_RECORDED",
    "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES",
    "EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED",
    "EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED",
    "EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED",
    "EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED",
    "EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED",
    "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED",
    "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED",
    "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED",
    "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW",
    "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED",
    "EVENT_TYPE_WORKFLOW_EXECUTION_FAILED",
}


@dataclass
class Task:
    """One completed workflow task: the inputs before it, its three events, its commands."""

    inputs: list[dict[str, Any]]
    scheduled: dict[str, Any]
    started: dict[str, Any]
    completed: dict[str, Any]
    commands: list[dict[str, Any]]


def _attrs(event: dict[str, Any]) -> dict[str, Any]:
    return next((v for k, v in event.items() if k.endswith("Attributes")), {})


def _refs(value: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every (holder, key) whose value names another event of the history."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key.endswith("EventId") and isinstance(inner, str | int):
                yield value, key
            else:
                yield from _refs(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _refs(inner)


def split(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Task], list[Any]]:
    """Events before the first task, the completed tasks, and whatever follows the last."""
    head: list[dict[str, Any]] = []
    tasks: list[Task] = []
    pending: list[dict[str, Any]] = []
    i = 0
    while i < len(events):
        e = events[i]
        kind = e["eventType"]
        if (
            kind == WFT_SCHEDULED
            and i + 2 < len(events)
            and events[i + 1]["eventType"] == WFT_STARTED
            and events[i + 2]["eventType"] == WFT_COMPLETED
        ):
            task = Task(pending, e, events[i + 1], events[i + 2], [])
            pending = []
            i += 3
            while i < len(events) and events[i]["eventType"] in COMMAND_EVENTS:
                task.commands.append(events[i])
                i += 1
            tasks.append(task)
            continue
        if not tasks:
            head.append(e)
        else:
            pending.append(e)
        i += 1
    return head, tasks, pending


def _accepts(task: Task) -> bool:
    return any(c["eventType"].endswith("UPDATE_ACCEPTED") for c in task.commands)


def _has_inputs(task: Task) -> bool:
    """Events it was handed, or an Update it accepted (a request is no event until then)."""
    return bool(task.inputs) or _accepts(task)


def _merged_commands(first: Task, second: Task) -> list[dict[str, Any]]:
    """Both tasks' commands as one completion sends them."""
    # Sent in one completion, a timer the first part started and the second cancelled never
    # reaches the server (the drill's table went from timer 47 to 49 that way).
    cancelled = {
        _attrs(c)["timerId"]
        for c in second.commands
        if c["eventType"] == "EVENT_TYPE_TIMER_CANCELED"
    }
    elided = {
        _attrs(c)["timerId"]
        for c in first.commands
        if c["eventType"] == "EVENT_TYPE_TIMER_STARTED" and _attrs(c)["timerId"] in cancelled
    }
    return [
        c
        for c in first.commands + second.commands
        if not (
            c["eventType"] in ("EVENT_TYPE_TIMER_STARTED", "EVENT_TYPE_TIMER_CANCELED")
            and _attrs(c)["timerId"] in elided
        )
    ]


def _accept_follows_command(first: Task, second: Task) -> bool:
    """In the merged completion, an Update of task k accepted after some other command."""
    seen_other = False
    for c in _merged_commands(first, second):
        if c["eventType"].endswith("UPDATE_ACCEPTED"):
            if seen_other and any(c is mine for mine in second.commands):
                return True
        else:
            seen_other = True
    return False


def mergeable(tasks: list[Task], k: int) -> bool:
    """Task k's inputs can have arrived before task k-1 completed (none answers its commands)."""
    if k < 1 or not _has_inputs(tasks[k]) or not _has_inputs(tasks[k - 1]):
        return False
    if _accepts(tasks[k]) and _accept_follows_command(tasks[k - 1], tasks[k]):
        # The SDK accepts an Update the moment it is delivered, before any coroutine runs: a
        # replay of one task writes every acceptance first. "A command, then B accepted" in
        # one task (task k-1's commands, then task k's acceptance) replays as "B accepted,
        # the command" whatever the workflow does: a recording no workflow code can follow
        # (see docs/durability.md, what the rules cannot cover).
        return False
    previous = {int(e["eventId"]) for e in (tasks[k - 1].completed, *tasks[k - 1].commands)}
    for event in tasks[k].inputs:
        if event["eventType"].endswith("TIMED_OUT") or event["eventType"].endswith("FAILED"):
            return False  # a task that failed or timed out: not a plain pair
        for holder, key in _refs(_attrs(event)):
            if int(holder[key]) in previous or int(holder[key]) >= int(
                tasks[k - 1].completed["eventId"]
            ):
                return False
    return True


def merged(history: WorkflowHistory, k: int) -> WorkflowHistory:
    """The history as if task k's inputs had reached the worker with task k-1's."""
    doc = json.loads(history.to_json())
    head, tasks, tail = split(doc["events"])
    assert mergeable(tasks, k), f"task {k} answers a command of task {k - 1}"
    first, second = tasks[k - 1], tasks[k]
    # The later task's clock and ids (its started event is what a replay reads the time from),
    # the flags either completion recorded.
    completed = json.loads(json.dumps(second.completed))
    metadata = _attrs(completed).setdefault("sdkMetadata", {})
    for source in (first.completed, second.completed):
        theirs = _attrs(source).get("sdkMetadata", {})
        for flags in ("coreUsedFlags", "langUsedFlags"):
            if theirs.get(flags):
                metadata[flags] = sorted(set(metadata.get(flags, [])) | set(theirs[flags]))
        for name in ("sdkName", "sdkVersion"):
            if theirs.get(name):
                metadata[name] = theirs[name]
    commands = _merged_commands(first, second)
    one = Task(first.inputs + second.inputs, second.scheduled, second.started, completed, commands)
    order = [*head]
    for task in [*tasks[: k - 1], one, *tasks[k + 1 :]]:
        order += [*task.inputs, task.scheduled, task.started, task.completed, *task.commands]
    order += tail
    # Renumber, and point what named the dropped events (task k-1's three) at the merged task.
    renamed = {int(e["eventId"]): n for n, e in enumerate(order, start=1)}
    for old, new in (
        (first.scheduled, second.scheduled),
        (first.started, second.started),
        (first.completed, second.completed),
    ):
        renamed[int(old["eventId"])] = renamed[int(new["eventId"])]
    for event in order:
        for holder, key in _refs(_attrs(event)):
            if int(holder[key]) in renamed:
                holder[key] = str(renamed[int(holder[key])])
        event["eventId"] = str(renamed[int(event["eventId"])])
    doc["events"] = order
    return WorkflowHistory.from_json(history.workflow_id, json.dumps(doc))


def mixed_pairs(history: WorkflowHistory) -> list[int]:
    """The task pairs worth merging: task k's inputs include a timer, a signal or an Update
    request and task k-1's include another kind (the overlaps the drills broke on)."""
    _, tasks, _ = split(json.loads(history.to_json())["events"])

    def kinds(task: Task) -> set[str]:
        out = {e["eventType"] for e in task.inputs}
        if any(c["eventType"].endswith("UPDATE_ACCEPTED") for c in task.commands):
            out.add("update")
        return out

    found = []
    for k in range(1, len(tasks)):
        if not mergeable(tasks, k):
            continue
        a, b = kinds(tasks[k - 1]), kinds(tasks[k])
        if a and b and a != b:
            found.append(k)
    return found
