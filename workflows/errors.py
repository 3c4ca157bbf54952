"""Turning domain refusals into Temporal failures that carry the error code as their type."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from domain.errors import DomainError, ErrorCode


def refusal(err: DomainError) -> ApplicationError:
    """A non-retryable ApplicationError whose ``type`` is the code (the API maps it once)."""
    return ApplicationError(
        err.message, {"field": err.field}, type=err.code.value, non_retryable=True
    )


def refuse(code: ErrorCode, message: str, *, field: str | None = None) -> ApplicationError:
    return refusal(DomainError(code, message, field=field))
