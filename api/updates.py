"""Sending an Update to a tournament, a table or a room (``noun``), with a coded answer when its
workflow has already closed.

Temporal answers an Update to a completed workflow with NOT_FOUND; to the caller that is not
"no such tournament" (or room) but "this tournament is over", so we tell the two apart.
"""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.workflow import UpdateMethodMultiParam

from api.errors import ApiError
from domain.errors import ErrorCode

P = TypeVar("P")
R = TypeVar("R")


async def execute_update(
    handle: WorkflowHandle[Any, Any],
    update: UpdateMethodMultiParam[[Any, P], R],
    arg: P,
    *,
    closed_code: ErrorCode,
    noun: str = "tournament",
    update_id: str | None = None,
) -> R:
    try:
        return await handle.execute_update(update, arg, id=update_id)
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        try:
            description = await handle.describe()
        except RPCError as missing:
            if missing.status == RPCStatusCode.NOT_FOUND:
                raise ApiError(ErrorCode.NOT_FOUND, f"no such {noun}") from None
            raise
        status = description.status.name.lower() if description.status else "closed"
        raise ApiError(closed_code, f"the {noun}'s workflow has {status}") from None
