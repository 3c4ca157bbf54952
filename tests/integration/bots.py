"""Scripted players for workflow tests: they read the table's view and answer through Updates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio.client import (
    Client,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from wire.table_messages import ActInput, TableView
from workflows.table import TableWorkflow


def raise_if_cancelling() -> None:
    """Inside an ``except WorkflowUpdateRPCTimeoutOrCancelledError``: the SDK reports a
    cancelled Update call as that error, so a bot task being cancelled must not take it for
    a slow worker and play on (its test would wait for it for ever)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


Policy = Callable[[dict[str, Any]], tuple[str, int | None]]


def passive(legal: dict[str, Any]) -> tuple[str, int | None]:
    """Check when free, else call: hands go to showdown and stacks drift slowly."""
    return ("check", None) if "check" in legal["actions"] else ("call", None)


def shove(legal: dict[str, Any]) -> tuple[str, int | None]:
    """All-in every time: tournaments end in a few hands."""
    return ("all_in", None) if "all_in" in legal["actions"] else passive(legal)


async def play(
    client: Client,
    table_workflow_id: str,
    players: list[str],
    policy: Policy = passive,
    *,
    until: Callable[[TableView], bool] = lambda v: v.finished,
    limit: float = 120.0,
) -> TableView:
    """Act for ``players`` whenever one of them is to act, until ``until(view)`` holds."""
    handle = client.get_workflow_handle_for(TableWorkflow.run, table_workflow_id)
    deadline = asyncio.get_running_loop().time() + limit
    while True:
        assert asyncio.get_running_loop().time() < deadline, "table did not finish in time"
        acted = False
        for player in players:
            try:
                view = await handle.query(TableWorkflow.view, player)
            except RPCError as err:
                # The tournament names its table a moment before the table exists; a query
                # can also time out while no worker is up (fault drills).
                if err.status not in (RPCStatusCode.NOT_FOUND, RPCStatusCode.DEADLINE_EXCEEDED):
                    raise
                await asyncio.sleep(0.2)
                continue
            if until(view):
                return view
            legal = view.hand.get("legal") if view.hand else None
            if legal is None:
                continue
            action, amount = policy(legal)
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
                acted = True
            except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError):
                raise_if_cancelling()
                pass  # the hand moved on, or no worker took it in time: read the view again
        if not acted:
            await asyncio.sleep(0.02)
