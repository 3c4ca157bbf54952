"""The one mapping from error codes to HTTP statuses, and the handlers that apply it.

Every refusal leaves the API as ``{"code", "message"}`` (plus ``field`` when it names one).
A client's mistake is never a 500.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from temporalio.client import (
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from domain.errors import DomainError, ErrorCode

STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_SETTINGS: 422,
    ErrorCode.INVALID_FIELD_SIZE: 422,
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.TOURNAMENT_FULL: 409,
    ErrorCode.TOURNAMENT_ALREADY_REGISTERED: 409,
    ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION: 409,
    ErrorCode.TOURNAMENT_NOT_REGISTERED: 409,
    ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH: 409,
    ErrorCode.PAID_REGISTRATION_USE_REFUND_PATH: 409,
    ErrorCode.TOURNAMENT_REGISTRATION_LIMIT: 409,
    ErrorCode.HUMANS_NOT_ALLOWED_AT_AGENT_TABLE: 409,
    ErrorCode.AGENT_NOT_ALLOWED_AT_HUMAN_TABLE: 409,
    ErrorCode.ADVISOR_REQUIRED: 409,
    ErrorCode.ADVISOR_ON_NON_COPILOT_KIND: 409,
    ErrorCode.NOT_AN_ADVISOR: 403,
    ErrorCode.ADVISOR_CANNOT_ACT: 403,
    ErrorCode.ADVICE_ALREADY_GIVEN: 409,
    ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT: 409,
    ErrorCode.INVALID_STATE: 409,
    ErrorCode.NOT_YOUR_TURN: 409,
    ErrorCode.ILLEGAL_ACTION: 409,
    ErrorCode.AMOUNT_OUT_OF_RANGE: 409,
    ErrorCode.STALE_TURN: 409,
    ErrorCode.UNKNOWN_SEAT: 409,
    ErrorCode.PLAYER_IN_TRANSIT: 409,
    ErrorCode.TABLE_MOVED: 409,
    ErrorCode.STALE_COMMITMENT: 409,
    ErrorCode.ALREADY_SEEDED: 409,
    ErrorCode.ALREADY_ACTED: 409,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 409,
    ErrorCode.INSUFFICIENT_FUNDS: 409,
    # The chain refused the money move (a definite answer): the caller's permit or funds.
    ErrorCode.CHAIN_REVERTED: 409,
    ErrorCode.CHAIN_DEPOSIT_REFUSED: 409,
    ErrorCode.CHAIN_REFUND_EXCEEDS_DEPOSIT: 409,
    ErrorCode.CHAIN_PAYOUT_CONFLICT: 409,
    ErrorCode.CHAIN_UNAVAILABLE: 503,
    ErrorCode.CHAIN_NOT_MINED: 503,
    ErrorCode.TOURNAMENT_REGISTRATION_COOLDOWN: 429,
    ErrorCode.WALLET_NOT_BOUND: 403,
    ErrorCode.WALLET_BOUND_ELSEWHERE: 409,
    ErrorCode.WALLET_CHALLENGE_INVALID: 422,
    ErrorCode.WALLET_LIMIT_REACHED: 409,
    ErrorCode.CARD_KEY_LOCKED: 409,
    ErrorCode.ROOM_FULL: 409,
    ErrorCode.ROOM_CLOSED: 409,
    ErrorCode.SEAT_TAKEN: 409,
    ErrorCode.ALREADY_SEATED: 409,
    ErrorCode.OWNER_ALREADY_SEATED: 409,
    ErrorCode.LEAVE_PENDING: 409,
    ErrorCode.ROOM_JOIN_COOLDOWN: 429,
    ErrorCode.TABLE_NOT_FOUND: 404,
    ErrorCode.AGENT_NOT_FOUND: 404,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.TOO_MANY_STREAMS: 429,
    ErrorCode.TOO_MANY_LONG_POLLS: 429,
    ErrorCode.NOT_A_TOURNAMENT: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.TEMPORARILY_UNAVAILABLE: 503,
    ErrorCode.WORKFLOW_UNREADABLE: 503,
}

QUERY_TIMEOUT = timedelta(seconds=5)
"""How long a read waits for a worker to answer a query (pass as ``rpc_timeout``): a workflow
no worker serves, or one too busy to answer, is a 503 to retry, not a request that hangs."""


class ErrorBody(BaseModel):
    code: str
    message: str
    field: str | None = None


def status_for(code: str) -> int:
    try:
        return STATUS[ErrorCode(code)]
    except (ValueError, KeyError):
        return 500


def error_response(code: str, message: str, field: str | None = None) -> JSONResponse:
    body = ErrorBody(code=code, message=message, field=field)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status_for(code))


ApiError = DomainError
"""A refusal the API raises is the domain's coded error (architecture review, change 5): one
type, one handler below; the name is kept for the API's own refusals."""


def _first_detail(err: ApplicationError) -> dict[str, Any]:
    """A coded refusal's details (``field``, ``retryAfterSeconds``), as wire/refusals.py
    writes them."""
    details: list[Any] = list(err.details or [])
    return details[0] if details and isinstance(details[0], dict) else {}


def _from_application_error(err: ApplicationError) -> JSONResponse | None:
    if err.type is None:
        return None
    first = _first_detail(err)
    response = error_response(err.type, err.message, first.get("field"))
    retry_after = first.get("retryAfterSeconds")
    if isinstance(retry_after, int):
        response.headers["Retry-After"] = str(max(1, retry_after))
    elif response.status_code in (429, 503):
        response.headers["Retry-After"] = "1"
    return response


def refusal_of(err: Exception) -> tuple[str, str, str | None]:
    """(code, message, field) for an error a request raised, as the HTTP handlers below would
    answer it: for channels without HTTP statuses (the WebSocket)."""
    if isinstance(err, DomainError):
        return err.code.value, err.message, err.field
    if isinstance(err, WorkflowUpdateFailedError) and isinstance(err.cause, ApplicationError):
        cause = err.cause
        if cause.type is not None:
            return cause.type, cause.message, _first_detail(cause).get("field")
    if isinstance(err, RPCError) and err.status == RPCStatusCode.NOT_FOUND:
        return ErrorCode.NOT_FOUND.value, "no such table", None
    return (
        ErrorCode.TEMPORARILY_UNAVAILABLE.value,
        "the table did not answer; nothing was applied, try again",
        None,
    )


def _unavailable(message: str) -> JSONResponse:
    response = error_response(ErrorCode.TEMPORARILY_UNAVAILABLE.value, message)
    response.headers["Retry-After"] = "1"
    return response


def install(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _domain(_: Request, err: DomainError) -> JSONResponse:
        # The domain's refusals and the API's own (ApiError is DomainError).
        response = error_response(err.code.value, err.message, err.field)
        if err.retry_after_seconds is not None:
            response.headers["Retry-After"] = str(max(1, err.retry_after_seconds))
        return response

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, err: StarletteHTTPException) -> JSONResponse:
        # Unknown routes and methods answer in the catalogue's shape too, not {"detail"}.
        code = {
            401: ErrorCode.UNAUTHORIZED,
            403: ErrorCode.FORBIDDEN,
            404: ErrorCode.NOT_FOUND,
            405: ErrorCode.METHOD_NOT_ALLOWED,
        }.get(err.status_code, ErrorCode.VALIDATION_ERROR)
        message = "no such route" if err.status_code == 404 else str(err.detail)
        body = ErrorBody(code=code.value, message=message)
        return JSONResponse(
            body.model_dump(exclude_none=True),
            status_code=err.status_code,
            headers=getattr(err, "headers", None),
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {"loc": (), "msg": "invalid request"}
        field = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path"))
        return error_response(
            ErrorCode.VALIDATION_ERROR.value, str(first.get("msg")), field or None
        )

    @app.exception_handler(WorkflowUpdateFailedError)
    async def _update_failed(_: Request, err: WorkflowUpdateFailedError) -> JSONResponse:
        cause = err.cause
        if isinstance(cause, ApplicationError):
            response = _from_application_error(cause)
            if response is not None:
                return response
        raise err

    @app.exception_handler(WorkflowUpdateRPCTimeoutOrCancelledError)
    async def _update_timeout(
        _: Request, err: WorkflowUpdateRPCTimeoutOrCancelledError
    ) -> JSONResponse:
        # No worker took the Update in time (workers restarting, or overloaded): nothing was
        # applied, and the same call can be sent again.
        return _unavailable("no worker answered in time; nothing was applied, try again")

    @app.exception_handler(WorkflowQueryFailedError)
    async def _query_failed(_: Request, err: WorkflowQueryFailedError) -> JSONResponse:
        # The worker could not rebuild the workflow's state to answer (its history does not
        # replay) or the query itself failed: nothing the caller did, nothing a retry fixes.
        return error_response(
            ErrorCode.WORKFLOW_UNREADABLE.value,
            "this workflow's state cannot be read now; operators have been shown why",
        )

    @app.exception_handler(WorkflowAlreadyStartedError)
    async def _taken(_: Request, err: WorkflowAlreadyStartedError) -> JSONResponse:
        # Workflow ids are never reused (money keys start with them): nothing was started.
        return error_response(
            ErrorCode.INVALID_STATE.value, f"the id of {err.workflow_id} was used before"
        )

    @app.exception_handler(RPCError)
    async def _rpc(_: Request, err: RPCError) -> JSONResponse:
        if err.status == RPCStatusCode.NOT_FOUND:
            return error_response(ErrorCode.NOT_FOUND.value, "no such tournament")
        if err.status == RPCStatusCode.INVALID_ARGUMENT:
            # Temporal refused what the request named (an id too long, say): nothing was done.
            return error_response(
                ErrorCode.VALIDATION_ERROR.value, f"Temporal refused the request: {err.message}"
            )
        # Anything else Temporal answered (unavailable, a timeout, a full query buffer, a
        # refused Update) is the service's trouble, not the caller's: a 503 to retry.
        return _unavailable(f"Temporal did not answer: {err.message}")
