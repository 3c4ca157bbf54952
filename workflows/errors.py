"""Turning domain refusals into Temporal failures that carry the error code as their type."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from domain.errors import DomainError, ErrorCode


def refusal(err: DomainError) -> ApplicationError:
    """A non-retryable ApplicationError whose ``type`` is the code (the API maps it once)."""
    details: dict[str, object] = {"field": err.field}
    if err.retry_after_seconds is not None:
        details["retryAfterSeconds"] = err.retry_after_seconds
    return ApplicationError(err.message, details, type=err.code.value, non_retryable=True)


T = TypeVar("T")


def checked(verify: Callable[[T], object], arg: T) -> None:
    """Run a domain check in a handler or validator; its refusal becomes the coded failure."""
    try:
        verify(arg)
    except DomainError as err:
        raise refusal(err) from None


def refuse(code: ErrorCode, message: str, *, field: str | None = None) -> ApplicationError:
    return refusal(DomainError(code, message, field=field))
