"""Caps on open Server-Sent Event streams (security review M4): per client and in total.

A stream holds a connection and polls PostgreSQL every half second for as long as the client
keeps it open, so an uncapped client could open thousands. Each replica serves at most
``SNG_MAX_STREAMS`` streams, and one client at most ``SNG_MAX_STREAMS_PER_CLIENT`` (a client
is its credential when it sends one, else its address). One more is
``429 too_many_streams`` with ``Retry-After``: close one, or retry later.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from fastapi import Request

from api.errors import ApiError
from api.ratelimit import credential_key
from domain.errors import ErrorCode


def client_key(request: Request) -> str:
    credential = credential_key(request.scope)
    if credential is not None:
        return "credential:" + credential
    return "ip:" + (request.client.host if request.client else "unknown")


class StreamSlots:
    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self.open: Counter[str] = Counter()

    def acquire(self, request: Request) -> Callable[[], None]:
        """Take a slot for this request's client, or refuse; returns the (idempotent) release."""
        key = client_key(request)
        if sum(self.open.values()) >= self.total:
            raise ApiError(
                ErrorCode.TOO_MANY_STREAMS,
                f"this server has {self.total} streams open: retry in a moment",
                retry_after_seconds=5,
            )
        if self.open[key] >= self.per_client:
            raise ApiError(
                ErrorCode.TOO_MANY_STREAMS,
                f"at most {self.per_client} open streams per client: close one first",
                retry_after_seconds=5,
            )
        self.open[key] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.open[key] -= 1
                if self.open[key] <= 0:
                    del self.open[key]

        return release
