"""Per-address and per-identity request limits (security reviews M4 and N3), with ``limits``.

Every HTTP request counts against a moving window of its client address
(``SNG_RATE_LIMIT_IP``, 100 per second by default) before anything else runs. Once the API has
*verified* who is calling (a player's token, an agent's key, an operator's key:
``count_identity``, which ``api/auth.py``, the codec and the fast path call right after a
check succeeds), the request counts against that identity's window as well
(``SNG_RATE_LIMIT_CREDENTIAL``, 20 per second). The identity is who the credential names, not
its bytes: a token spelled ``bearer`` or with more spaces, an agent key sent as
``X-Agent-Key`` or as a bearer token, are one identity. An unverified header (a junk
``X-Service-Key``, a bad token) creates no window of its own: such a request counts against
its address only (security review N3: each junk header used to get a fresh window). Past
either, the answer is ``429 rate_limited`` with ``Retry-After``. An empty setting turns that
limit off. ``/healthz`` is not limited (probes).

The windows live in this process's memory: with N API replicas behind a load balancer a
client gets up to N times the limit. That is a bound, not an exact quota; a shared quota
needs a shared store (``limits`` supports Redis and others through a storage URI), which the
service does not run today. Behind a reverse proxy, tell ``sng api`` the proxy's address
(``--forwarded-allow-ips`` or ``SNG_FORWARDED_ALLOW_IPS``, docs/operations.md), so the client
address is the caller's, not the proxy's.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import time
from typing import Any

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ApiError
from domain.errors import ErrorCode
from wire.stream_messages import Dropped, StreamError

UNLIMITED_PATHS = ("/healthz",)
LIMITER = "sng.rate_limit"
"""The scope key under which the middleware hands itself to the routes (``count_identity``)."""
IDENTITY = "sng.identity"
"""The scope key of the identity verified for this request or socket (``count_identity``):
what the per-identity window and the stream slots (api/streams.py) count it by."""


class RateLimit:
    def __init__(self, app: ASGIApp, *, per_ip: str, per_credential: str) -> None:
        self.app = app
        self.per_ip: RateLimitItem | None = parse(per_ip) if per_ip else None
        self.per_identity: RateLimitItem | None = parse(per_credential) if per_credential else None
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in UNLIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        scope[LIMITER] = self
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send)
            return
        refused = await self._refused(self._address(scope))
        if refused is not None:
            await _refuse(send, *refused)
            return
        await self.app(scope, receive, send)

    def _address(self, scope: Scope) -> list[tuple[RateLimitItem, str]]:
        if self.per_ip is None:
            return []
        client = scope.get("client")
        return [(self.per_ip, f"ip:{address_key(client[0] if client else 'unknown')}")]

    async def _refused(
        self, checks: list[tuple[RateLimitItem, str]]
    ) -> tuple[int, RateLimitItem] | None:
        for item, key in checks:
            if not await self.limiter.hit(item, key):
                stats = await self.limiter.get_window_stats(item, key)
                return max(1, math.ceil(stats.reset_time - time.time())), item
        return None

    async def count_identity(self, scope: Scope, identity: str) -> None:
        """Count a request (or a socket's handshake) against the window of the identity its
        credential was just verified as; ``429 rate_limited`` past it."""
        if scope.get(IDENTITY) == identity:
            # Counted already: a second check in the same request, or a socket's request
            # (each message a socket receives counts in ``_socket``).
            return
        if self.per_identity is not None:
            refused = await self._refused([(self.per_identity, f"identity:{identity}")])
            if refused is not None:
                wait, item = refused
                raise ApiError(
                    ErrorCode.RATE_LIMITED,
                    f"too many requests for this credential (at most {item}): retry after {wait} s",
                    retry_after_seconds=wait,
                )
        scope[IDENTITY] = identity

    async def _socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket counts like requests: its handshake, and then each message the client
        sends (an ``act`` is an Update on the table, as ``POST …/act`` is), against its
        address and, once the route verified its credential, that identity. A message over
        the limit is answered with an ``error`` frame (``rate_limited``) that names it
        (``dropped``: its place on the socket, its ``type``, its ``requestId``, which the
        frame echoes as every answer does) and never reaches the route; a handshake over it
        is closed (4429)."""
        if await self._refused(self._address(scope)) is not None:
            await send({"type": "websocket.close", "code": 4429, "reason": "rate_limited"})
            return
        index = 0

        async def limited() -> Message:
            nonlocal index
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                index += 1
                checks = self._address(scope)
                identity = scope.get(IDENTITY)
                if identity is not None and self.per_identity is not None:
                    checks.append((self.per_identity, f"identity:{identity}"))
                refused = await self._refused(checks)
                if refused is None:
                    return message
                wait, item = refused
                dropped = dropped_message(index, message.get("text"))
                error = StreamError(
                    code=ErrorCode.RATE_LIMITED.value,
                    message=f"more than {item}: retry in {wait} s; message {index} was dropped",
                    retry_after_seconds=wait,
                    dropped=dropped,
                )
                frame: dict[str, Any] = {"event": "error", "data": error.to_wire()}
                if dropped.request_id is not None:
                    frame["requestId"] = dropped.request_id
                await send({"type": "websocket.send", "text": json.dumps(frame)})

        await self.app(scope, limited, send)


NAMED_CHARS = 65_536
"""A dropped message longer than this is named by its place only: the limit's refusal stays
cheap, whatever a client floods it with (an ``act`` or a ``seed`` is well under 1 KiB)."""


def dropped_message(index: int, text: str | None) -> Dropped:
    """What names a dropped message: its place on the socket, and its ``type`` and
    ``requestId`` when it is a JSON object (of at most ``NAMED_CHARS``) that has them.

    >>> dropped_message(2, '{"type": "act", "requestId": "r7", "turn": 3}').to_wire()
    {'index': 2, 'type': 'act', 'requestId': 'r7'}
    >>> dropped_message(3, "not json").to_wire()
    {'index': 3, 'type': None}
    """
    parsed: Any = None
    if text is not None and len(text) <= NAMED_CHARS:
        with contextlib.suppress(ValueError, RecursionError):
            parsed = json.loads(text)
    if not isinstance(parsed, dict):
        return Dropped(index=index, type=None)
    kind = parsed.get("type")
    return Dropped(
        index=index,
        type=kind if isinstance(kind, str) and len(kind) <= 64 else None,
        request_id=parsed.get("requestId"),
    )


async def count_identity(scope: Scope, identity: str) -> None:
    """Record that this request's credential was verified as ``identity`` (``player:<sub>``,
    ``agent:<id>``, ``operator:<door>``) and count it against that identity's window: call it
    right after a credential check succeeds, never before. Raises ``ApiError`` (``429
    rate_limited``, with ``Retry-After``) past the window."""
    limiter: Any = scope.get(LIMITER)
    if isinstance(limiter, RateLimit):
        await limiter.count_identity(scope, identity)
    else:  # an app without the middleware (no limits): the stream slots still read it
        scope[IDENTITY] = identity


def verified_identity(scope: Scope) -> str | None:
    """The identity ``count_identity`` recorded for this request or socket, if any."""
    identity = scope.get(IDENTITY)
    return identity if isinstance(identity, str) else None


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


def address_key(host: str) -> str:
    """What the per-address limits count: an IPv4 address as it is, an IPv6 address by its
    /64 (one host commonly holds a whole /64, so counting single IPv6 addresses would give it
    as many windows and stream slots as it likes: independent review of N3).

    >>> address_key("203.0.113.7"), address_key("2001:db8:1:2:aaaa::1"), address_key("x")
    ('203.0.113.7', '2001:db8:1:2::/64', 'x')
    """
    try:
        parsed = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)
