"""Domain checks in handlers and validators: a refusal becomes the coded failure
(``wire.refusals``, which the activities use too)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from domain.errors import DomainError, ErrorCode
from wire.refusals import refusal

__all__ = ["checked", "coded", "refusal", "refuse"]

T = TypeVar("T")


@contextmanager
def coded() -> Iterator[None]:
    """Domain checks in a handler or validator: a refusal becomes the coded failure.

    >>> from domain.registration import verify_cancel
    >>> with coded():
    ...     verify_cancel("playing")
    Traceback (most recent call last):
    ...
    temporalio.exceptions.ApplicationError: invalid_state: only a registering tournament can be \
cancelled, not a playing one
    """
    try:
        yield
    except DomainError as err:
        raise refusal(err) from None


def checked(verify: Callable[[T], object], arg: T) -> None:
    """Run a domain check in a handler or validator; its refusal becomes the coded failure."""
    with coded():
        verify(arg)


def refuse(code: ErrorCode, message: str, *, field: str | None = None) -> ApplicationError:
    return refusal(DomainError(code, message, field=field))
