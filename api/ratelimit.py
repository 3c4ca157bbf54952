"""Per-IP and per-credential request limits (security review M4), with the ``limits`` library.

Every HTTP request counts against two moving windows: its client address
(``SNG_RATE_LIMIT_IP``, 100 per second by default) and, when it carries one, its credential
(``SNG_RATE_LIMIT_CREDENTIAL``, 20 per second: a bearer token, an agent key or an operator
key, hashed). Past either, the answer is ``429 rate_limited`` with ``Retry-After``, and
nothing reaches a route, Temporal or PostgreSQL. An empty setting turns that limit off.
``/healthz`` is not limited (probes).

The windows live in this process's memory: with N API replicas behind a load balancer a
client gets up to N times the limit. That is a bound, not an exact quota; a shared quota
needs a shared store (``limits`` supports Redis and others through a storage URI), which the
service does not run today. Behind a reverse proxy, start uvicorn with ``--proxy-headers``
and ``--forwarded-allow-ips`` so the client address is the caller's, not the proxy's.
"""

from __future__ import annotations

import hashlib
import json
import math
import time

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import ErrorCode

CREDENTIAL_HEADERS = (b"authorization", b"x-agent-key", b"x-service-key")
UNLIMITED_PATHS = ("/healthz",)


class RateLimit:
    def __init__(self, app: ASGIApp, *, per_ip: str, per_credential: str) -> None:
        self.app = app
        self.per_ip: RateLimitItem | None = parse(per_ip) if per_ip else None
        self.per_credential: RateLimitItem | None = (
            parse(per_credential) if per_credential else None
        )
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in UNLIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        checks: list[tuple[RateLimitItem, str]] = []
        if self.per_ip is not None:
            client = scope.get("client")
            checks.append((self.per_ip, f"ip:{client[0] if client else 'unknown'}"))
        credential = credential_key(scope)
        if self.per_credential is not None and credential is not None:
            checks.append((self.per_credential, f"credential:{credential}"))
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send, checks)
            return
        refused = await self._refused(checks)
        if refused is not None:
            await _refuse(send, *refused)
            return
        await self.app(scope, receive, send)

    async def _refused(
        self, checks: list[tuple[RateLimitItem, str]]
    ) -> tuple[int, RateLimitItem] | None:
        for item, key in checks:
            if not await self.limiter.hit(item, key):
                stats = await self.limiter.get_window_stats(item, key)
                return max(1, math.ceil(stats.reset_time - time.time())), item
        return None

    async def _socket(
        self, scope: Scope, receive: Receive, send: Send, checks: list[tuple[RateLimitItem, str]]
    ) -> None:
        """A WebSocket counts like requests: its handshake, and then each message the client
        sends (an ``act`` is an Update on the table, as ``POST …/act`` is). A message over
        the limit is answered with an ``error`` frame (``rate_limited``) and never reaches
        the route; a handshake over it is closed (4429)."""
        if await self._refused(checks) is not None:
            await send({"type": "websocket.close", "code": 4429, "reason": "rate_limited"})
            return

        async def limited() -> Message:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                refused = await self._refused(checks)
                if refused is None:
                    return message
                wait, item = refused
                await send(
                    {
                        "type": "websocket.send",
                        "text": json.dumps(
                            {
                                "event": "error",
                                "data": {
                                    "code": ErrorCode.RATE_LIMITED.value,
                                    "message": f"more than {item}: retry in {wait} s",
                                },
                            }
                        ),
                    }
                )

        await self.app(scope, limited, send)


def credential_key(scope: Scope) -> str | None:
    """A short hash of the request's credential (never the credential itself, in memory):
    what the rate limit and the stream caps count a client by when it sends one."""
    for name, value in scope.get("headers", []):
        if name.lower() in CREDENTIAL_HEADERS and value:
            return hashlib.sha256(bytes(value)).hexdigest()[:24]
    return None


async def _refuse(send: Send, retry_after: int, item: RateLimitItem) -> None:
    body = {
        "code": ErrorCode.RATE_LIMITED.value,
        "message": f"too many requests (at most {item}): retry after {retry_after} s",
    }
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"retry-after", str(retry_after).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
