"""Domain checks in handlers and validators: a refusal becomes the coded failure
(``wire.refusals``, which the activities use too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from domain.errors import DomainError, ErrorCode
from wire.refusals import refusal

__all__ = ["checked", "refusal", "refuse"]


T = TypeVar("T")


def checked(verify: Callable[[T], object], arg: T) -> None:
    """Run a domain check in a handler or validator; its refusal becomes the coded failure."""
    try:
        verify(arg)
    except DomainError as err:
        raise refusal(err) from None


def refuse(code: ErrorCode, message: str, *, field: str | None = None) -> ApplicationError:
    return refusal(DomainError(code, message, field=field))
