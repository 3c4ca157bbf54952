"""The determinism check every test run ends with: replay each history a server holds.

Every run of every workflow (continued-as-new runs included) is fetched and replayed with
today's workflow code, the deployment's data converter and the workers' flags
(``worker.build_replayer``). A divergence is a failure of the whole run, not a warning: a
history that does not replay is a tournament that cannot be resumed or read.
"""

from __future__ import annotations

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
    """Every run the namespace has (open and closed), newest first as visibility lists them."""
    out = []
    async for execution in client.list_workflows(query or None):
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        out.append(await handle.fetch_history())
    return out


async def replay_histories(client: Client, found: list[WorkflowHistory]) -> ReplayReport:
    replayer = build_replayer(
        client.data_converter, namespace=client.namespace, extra=helper_workflows()
    )
    failures = []
    found = [
        h
        for h in found
        if h.workflow_id not in WRITTEN_BY_ANOTHER_BUILD
        # A run no worker ever took (a test's idle queue) has no decisions to check.
        and any(e.HasField("workflow_task_completed_event_attributes") for e in h.events)
    ]
    for history in found:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        if result.replay_failure is not None:
            failures.append(f"{history.workflow_id}: {str(result.replay_failure)[:300]}")
    return ReplayReport(replayed=len(found), failures=failures)


async def replay_everything(client: Client, query: str = "") -> ReplayReport:
    return await replay_histories(client, await histories(client, query))


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
