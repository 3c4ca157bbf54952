"""The determinism check every test run ends with: replay each history a server holds.

Every run of every workflow (continued-as-new runs included) is fetched and replayed with
today's workflow code, the deployment's data converter and the workers' flags
(``worker.build_replayer``). A divergence is a failure of the whole run, not a warning: a
history that does not replay is a tournament that cannot be resumed or read.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowInput,
    WorkflowHandle,
    WorkflowHistory,
)
from temporalio.service import RPCError, RPCStatusCode

from worker import build_replayer


def helper_workflows() -> list[type]:
    """The small workflows tests run beside ours (a hand sink, money-leg drivers, the bench's
    bare-update baseline)."""
    from bench.echo import EchoWorkflow
    from tests.chain.money_workflows import MoneyMoveWorkflow, PayPrizeWorkflow
    from tests.integration.hand_sink import HandSink

    return [EchoWorkflow, HandSink, MoneyMoveWorkflow, PayPrizeWorkflow]


WRITTEN_BY_ANOTHER_BUILD: set[str] = set()
"""Workflow ids a test deliberately ran under a different build of the code (the wedge test):
their histories are not today's code's to replay, and the end-of-run pass leaves them out."""


def written_by_another_build(workflow_id: str) -> None:
    WRITTEN_BY_ANOTHER_BUILD.add(workflow_id)


REFUSING_ON_PURPOSE: set[str] = set()
"""Workflow ids a test drove into a task the code refuses (a forged deck draw): their last
task fails on every replay by design, and the test replays them itself."""


def refusing_on_purpose(workflow_id: str) -> None:
    REFUSING_ON_PURPOSE.add(workflow_id)


REPLAYED: dict[tuple[str, str], int] = {}
"""Runs this process replayed without a failure, by (workflow id, run id): how many events
their history had then. The end-of-run pass skips a run whose history has not grown since a
test replayed it (the same events, the same verdict), and replays every other."""


@dataclass
class ReplayReport:
    replayed: int
    failures: list[str]

    def raise_on_failure(self) -> None:
        if self.failures:
            raise AssertionError(
                f"{len(self.failures)} of {self.replayed} histories do not replay:\n"
                + "\n".join(self.failures[:20])
            )


async def histories(client: Client, query: str = "") -> list[WorkflowHistory]:
    """Every run the namespace has (open and closed), newest first as visibility lists them;
    fetched a few at a time (one by one, a suite's thousand runs took half a minute)."""
    executions = [e async for e in client.list_workflows(query or None)]
    gate = asyncio.Semaphore(16)

    async def fetch(workflow_id: str, run_id: str | None) -> WorkflowHistory:
        async with gate:
            return await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()

    return list(await asyncio.gather(*(fetch(e.id, e.run_id) for e in executions)))


PARALLEL_FROM = 400
"""From this many histories on (a whole suite's), the replay runs in one process per CPU: it
is CPU-bound, about 60 ms a history, and a spawned process costs a few seconds to start."""


async def replay_histories(client: Client, found: list[WorkflowHistory]) -> ReplayReport:
    found = [
        h
        for h in found
        if h.workflow_id not in WRITTEN_BY_ANOTHER_BUILD | REFUSING_ON_PURPOSE
        # A run no worker ever took (a test's idle queue) has no decisions to check.
        and any(e.HasField("workflow_task_completed_event_attributes") for e in h.events)
    ]
    processes = min(os.cpu_count() or 1, 4)
    if len(found) < PARALLEL_FROM or processes < 2:
        replayer = build_replayer(
            client.data_converter, namespace=client.namespace, extra=helper_workflows()
        )
        failures = await _replay(replayer, found)
    else:
        # Each process builds the same replayer from the same settings (the codec key comes
        # from the environment, which a spawned process inherits).
        jobs = [
            [(h.workflow_id, h.to_json()) for h in found[k::processes]] for k in range(processes)
        ]
        loop = asyncio.get_running_loop()
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(processes, mp_context=spawn) as pool:
            parts = await asyncio.gather(
                *(
                    loop.run_in_executor(pool, _replay_in_process, client.namespace, job)
                    for job in jobs
                )
            )
        failures = [f for part in parts for f in part]
    failed = {f.partition(": ")[0] for f in failures}
    for h in found:
        if h.workflow_id not in failed:
            REPLAYED[(h.workflow_id, h.run_id)] = len(h.events)
    return ReplayReport(replayed=len(found), failures=failures)


async def _replay(replayer: Any, found: list[WorkflowHistory]) -> list[str]:
    """One replay worker for them all (``replay_workflow`` starts a worker per history)."""

    async def each() -> AsyncIterator[WorkflowHistory]:
        for history in found:
            yield history

    failures = []
    async with replayer.workflow_replay_iterator(each()) as results:
        async for result in results:
            if result.replay_failure is not None:
                failures.append(f"{result.history.workflow_id}: {str(result.replay_failure)[:300]}")
    return failures


def _replay_in_process(namespace: str, job: list[tuple[str, str]]) -> list[str]:
    from core.temporal import data_converter

    replayer = build_replayer(data_converter(), namespace=namespace, extra=helper_workflows())
    found = [WorkflowHistory.from_json(workflow_id, text) for workflow_id, text in job]
    return asyncio.run(_replay(replayer, found))


async def replay_everything(client: Client, query: str = "") -> ReplayReport:
    import sys
    import time

    t0 = time.monotonic()
    found = await histories(client, query)
    fresh = [h for h in found if REPLAYED.get((h.workflow_id, h.run_id)) != len(h.events)]
    t1 = time.monotonic()
    report = await replay_histories(client, fresh)
    print(
        f"REPLAYTIMING fetch {t1 - t0:.1f}s n={len(found)} replayed by their tests "
        f"{len(found) - len(fresh)} events={sum(len(h.events) for h in fresh)} "
        f"replay {time.monotonic() - t1:.1f}s",
        file=sys.stderr,
    )
    return report


class StartedWorkflows(Interceptor):
    """Remembers the id of every workflow a client starts (for a server that cannot list)."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        recorder = self

        class _Recording(OutboundInterceptor):
            async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
                recorder.ids.append(input.id)
                return await super().start_workflow(input)

        return _Recording(next)

    async def replay_all(self, client: Client) -> None:
        """Replay every run these starts led to; raise on any divergence."""
        found = await histories_from(client, self.ids)
        (await replay_histories(client, found)).raise_on_failure()


async def histories_from(client: Client, workflow_ids: list[str]) -> list[WorkflowHistory]:
    """Every run reachable from these ids: back through continue-as-new, down to children."""
    out: list[WorkflowHistory] = []
    seen: set[tuple[str, str]] = set()
    todo = [(wid, "") for wid in dict.fromkeys(workflow_ids)]
    while todo:
        wid, run_id = todo.pop()
        try:
            if not run_id:
                run_id = (await client.get_workflow_handle(wid).describe()).run_id
            if (wid, run_id) in seen:
                continue
            history = await client.get_workflow_handle(wid, run_id=run_id).fetch_history()
        except RPCError as err:
            if err.status is RPCStatusCode.NOT_FOUND:
                continue  # a start that the server refused (an id already in use, say)
            raise
        seen.add((wid, run_id))
        out.append(history)
        first = history.events[0].workflow_execution_started_event_attributes
        if first.continued_execution_run_id:
            todo.append((wid, first.continued_execution_run_id))
        for event in history.events:
            if event.HasField("child_workflow_execution_started_event_attributes"):
                child = event.child_workflow_execution_started_event_attributes.workflow_execution
                todo.append((child.workflow_id, child.run_id))
    return out
