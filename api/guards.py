"""Refuse what no route can store before any route sees it: NUL characters, oversized bodies;
and, on WebSocket upgrades too, requests to another host (dev) and cross-origin pages.

PostgreSQL text cannot hold NUL, so a NUL in a path, a query or a body string used to reach
the database and come back as a 500 (security review L1). This ASGI middleware answers such a
request ``422 validation_error`` and changes nothing: a NUL byte or ``%00`` in the path or the
query string, and in a body a JSON ``\\u0000`` escape, a raw NUL byte, or ``%00`` in a form.

A body is read at most ``max_body`` bytes far (64 KiB; the codec endpoint, which the Temporal
UI sends whole histories' payloads, 4 MiB): a larger ``Content-Length``, or a chunked body
that grows past it, is ``413 payload_too_large`` before anything is buffered beyond the limit
(security review M4: the body was read whole into memory).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import ErrorCode

MESSAGE = "NUL characters are not accepted in paths, queries or bodies"
MAX_BODY = 64 * 1024
LARGER_BODIES = {"/codec/": 4 * 1024 * 1024}
"""Path prefixes allowed a larger body than ``MAX_BODY``."""


class _TooLarge(Exception):
    pass


class RefuseNul:
    def __init__(
        self, app: ASGIApp, max_body: int = MAX_BODY, larger: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.larger = LARGER_BODIES if larger is None else larger

    def _limit(self, path: str) -> int:
        return next((n for p, n in self.larger.items() if path.startswith(p)), self.max_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
        query: bytes = scope.get("query_string", b"")
        if _has_nul(raw_path) or _has_nul(query) or "\x00" in scope["path"]:
            await _refuse_scope(scope, receive, send)
            return
        if scope["type"] == "websocket" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope["path"])
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        try:
            body, tail = await _read_body(receive, limit)
        except _TooLarge:
            await _too_large(send, limit)
            return
        form = _header(scope, b"content-type").startswith(b"application/x-www-form-urlencoded")
        if b"\x00" in body or b"\\u0000" in body or (form and _has_nul(body)):
            await _refuse(send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return tail or await receive()

        await self.app(scope, replay, send)


def _has_nul(raw: bytes) -> bool:
    return b"\x00" in raw or b"%00" in raw


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).lower()
    return b""


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, Message | None]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message  # the client went away: pass that on
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), None


async def _too_large(send: Send, limit: int) -> None:
    await _refuse(
        send, 413, ErrorCode.PAYLOAD_TOO_LARGE, f"the request body is larger than {limit} bytes"
    )


async def _refuse(
    send: Send,
    status: int = 422,
    code: ErrorCode = ErrorCode.VALIDATION_ERROR,
    message: str = MESSAGE,
) -> None:
    body: dict[str, Any] = {"code": code.value, "message": message}
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


LOOPBACK_NAMES = (b"127.0.0.1", b"localhost", b"[::1]")


def addressed_to_loopback(host: bytes) -> bool:
    """Whether a ``Host`` header names this machine (a loopback name or address, any port)."""
    name = host.rsplit(b":", 1)[0] if not host.endswith(b"]") else host
    return name.lower() in LOOPBACK_NAMES


class LoopbackHostOnly:
    """The dev API answers only requests addressed to this machine (security review L12: a
    web page that points its own DNS name at 127.0.0.1 reaches a dev API, its open codec and
    the public dev keys from the victim's browser). Anything else is ``400 validation_error``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            if not addressed_to_loopback(_header(scope, b"host")):
                await _refuse_scope(
                    scope,
                    receive,
                    send,
                    400,
                    ErrorCode.VALIDATION_ERROR,
                    "the dev API answers requests to localhost or 127.0.0.1 only",
                )
                return
        await self.app(scope, receive, send)


class SameOriginWebSockets:
    """A browser's WebSocket upgrade is taken only from a page of this API's own origin
    (security review N9). A browser sends its page's ``Origin`` with every upgrade and, unlike
    ``fetch``, no CORS check stops a cross-origin socket; so an upgrade whose ``Origin`` names
    another host (or ``null``: a sandboxed page, a file) is ``403 forbidden``. An upgrade
    without ``Origin`` is a program, not a page (the client library, bots, agents): taken.
    Same origin means the ``Origin``'s host and port are the ``Host`` the request was sent to
    (behind a proxy, the proxy must pass the original ``Host`` on)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            origin = _raw_header(scope, b"origin")
            if origin is not None and not same_origin(origin, _header(scope, b"host")):
                await _refuse_scope(
                    scope,
                    receive,
                    send,
                    403,
                    ErrorCode.FORBIDDEN,
                    "a WebSocket from another origin's page is not accepted",
                )
                return
        await self.app(scope, receive, send)


DEFAULT_PORTS = {b"http": b"80", b"https": b"443", b"ws": b"80", b"wss": b"443"}


def same_origin(origin: bytes, host: bytes) -> bool:
    """Whether ``Origin: scheme://host[:port]`` names the host (and port) in ``Host``."""
    scheme, sep, rest = origin.strip().lower().partition(b"://")
    if not sep or not host or scheme not in DEFAULT_PORTS or b"/" in rest or b"@" in rest:
        return False
    default = DEFAULT_PORTS[scheme]

    def with_port(netloc: bytes) -> bytes:
        if netloc.endswith(b"]") or b":" not in netloc:
            return netloc + b":" + default
        return netloc

    # A Host without a port is the scheme's default port (the Origin's scheme names it).
    return with_port(rest) == with_port(host)


def _raw_header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


async def _refuse_scope(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int = 422,
    code: ErrorCode = ErrorCode.VALIDATION_ERROR,
    message: str = MESSAGE,
) -> None:
    """``_refuse`` for a request or a WebSocket upgrade (answered before it is accepted: the
    same coded HTTP answer where the server can send one, else a policy-violation close)."""
    if scope["type"] != "websocket":
        await _refuse(send, status, code, message)
        return
    await receive()  # websocket.connect
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008, "reason": code.value})
        return
    payload = json.dumps({"code": code.value, "message": message}).encode()
    await send(
        {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "websocket.http.response.body", "body": payload})
