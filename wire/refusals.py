"""How a refusal crosses Temporal: one ``ApplicationError`` per business refusal, its ``type``
the error code (the API maps it to a status once, ``api/errors.py``), its first detail a dict
with the refused ``field`` and, when there is one, ``retryAfterSeconds``.

Every refusal is non-retryable (retrying cannot make it succeed) and ``BENIGN``: a player who
sends a stale turn or a short balance is the product working, not a failure, so the SDK logs
it quietly and leaves it out of its failure metrics and the Temporal UI's failed counts."""

from __future__ import annotations

from typing import Any

from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from domain.errors import DomainError


def coded(code: str, message: str, details: dict[str, Any] | None = None) -> ApplicationError:
    """A refusal under ``code`` (an ``ErrorCode`` value, or a chain refusal's kind)."""
    return ApplicationError(
        message,
        details or {},
        type=code,
        non_retryable=True,
        category=ApplicationErrorCategory.BENIGN,
    )


def refusal(err: DomainError) -> ApplicationError:
    """A domain refusal as the coded failure."""
    details: dict[str, Any] = {"field": err.field}
    if err.retry_after_seconds is not None:
        details["retryAfterSeconds"] = err.retry_after_seconds
    return coded(err.code.value, err.message, details)


def passed_on(cause: ApplicationError) -> ApplicationError:
    """An activity's refusal re-raised by the workflow that ran it, details kept (the
    re-raise used to drop them, and with them the refused field)."""
    details = cause.details[0] if cause.details and isinstance(cause.details[0], dict) else {}
    return coded(cause.type or "internal", cause.message, details)
