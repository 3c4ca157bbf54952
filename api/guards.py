"""Refuse what no route can store before any route sees it: NUL characters.

PostgreSQL text cannot hold NUL, so a NUL in a path, a query or a body string used to reach
the database and come back as a 500 (security review L1). This ASGI middleware answers such a
request ``422 validation_error`` and changes nothing: a NUL byte or ``%00`` in the path or the
query string, and in a body a JSON ``\\u0000`` escape, a raw NUL byte, or ``%00`` in a form.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import ErrorCode

MESSAGE = "NUL characters are not accepted in paths, queries or bodies"


class RefuseNul:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
        query: bytes = scope.get("query_string", b"")
        if _has_nul(raw_path) or _has_nul(query) or "\x00" in scope["path"]:
            await _refuse(send)
            return
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        body, tail = await _read_body(receive)
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


async def _read_body(receive: Receive) -> tuple[bytes, Message | None]:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message  # the client went away: pass that on
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


async def _refuse(send: Send) -> None:
    body: dict[str, Any] = {"code": ErrorCode.VALIDATION_ERROR.value, "message": MESSAGE}
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 422,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode())],
        }
    )  # fmt: skip
    await send({"type": "http.response.body", "body": payload})
