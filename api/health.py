"""Whether a workflow can make progress: the signs operators act on (docs/operations.md).

A workflow whose history its workers cannot replay fails every workflow task it is given and
retries it for ever; nothing in its own state says so. Temporal does: the pending task's
attempt number, and the last WorkflowTaskFailed event with its cause.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import Client
from temporalio.service import RPCError

from api.errors import QUERY_TIMEOUT

STUCK_AFTER_ATTEMPTS = 2
"""A task on its second attempt has failed (or timed out) once: worth showing."""


@dataclass(frozen=True)
class TaskTrouble:
    workflow_id: str
    attempt: int
    cause: str
    """The last failure's cause, e.g. NON_DETERMINISTIC_ERROR, or TIMED_OUT."""
    message: str


async def task_trouble(client: Client, workflow_id: str) -> TaskTrouble | None:
    """What is wrong with the workflow's current task, if it keeps failing; None if nothing
    is (or the workflow cannot be described: the caller already shows that)."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        desc = await handle.describe(rpc_timeout=QUERY_TIMEOUT)
    except RPCError:
        return None
    pending = desc.raw_description.pending_workflow_task
    if not desc.raw_description.HasField("pending_workflow_task") or (
        pending.attempt < STUCK_AFTER_ATTEMPTS
    ):
        return None
    cause, message = "TIMED_OUT", "the workflow task timed out"
    try:
        page = await client.workflow_service.get_workflow_execution_history_reverse(
            GetWorkflowExecutionHistoryReverseRequest(
                namespace=client.namespace,
                execution=WorkflowExecution(workflow_id=workflow_id, run_id=desc.run_id),
                maximum_page_size=100,
            ),
            timeout=QUERY_TIMEOUT,
        )
    except RPCError:
        page = None
    for event in page.history.events if page else []:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            failed = event.workflow_task_failed_event_attributes
            cause = WorkflowTaskFailedCause.Name(failed.cause).removeprefix(
                "WORKFLOW_TASK_FAILED_CAUSE_"
            )
            message = failed.failure.message
            break
    return TaskTrouble(workflow_id, pending.attempt, cause, message)
