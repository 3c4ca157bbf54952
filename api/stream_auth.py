"""A per-player stream's credential, checked again while the stream is open (security review
N6): a stream ends with the credential that opened it.

A stream is opened with a bearer JWT or an agent key, like any call (``api.auth``). While it
stays open, ``StreamCredential.check`` is called before each message that carries private
data (a ``game_state``, an ``action_required``) and at least every ``POLL_SECONDS`` while the
stream idles. It raises an ``unauthorized`` refusal once the credential no longer holds:

- a JWT at its ``exp`` (compared on every call: nothing private goes out after it), or when
  it no longer verifies under the deployment's keys;
- an agent key once it is revoked (one indexed read of ``agents``, at most every
  ``RECHECK_SECONDS`` per stream: a revocation ends the agent's streams within about that).

The same read tells an agent's stream that its Agent Card's key changed (docs/api.md, the
Agent Card): ``card_change`` returns the card as it is now, once per change.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import jwt
from starlette.requests import HTTPConnection
from starlette.websockets import WebSocket

from api.auth import Caller, current_player, verify_player_token
from api.errors import ApiError
from api.play import session as play_session
from api.state import state_of
from db import agents
from domain.errors import ErrorCode
from wire.stream_messages import AgentCardChanged

RECHECK_SECONDS = 1.0
"""How long a stream trusts its last check of an agent key or a JWT's signature (a JWT's
``exp`` is compared on every check)."""


class StreamCredential:
    """The credential a stream was opened with (already verified once, at connect)."""

    def __init__(self, connection: HTTPConnection, viewer: str) -> None:
        self.app = connection.app
        self.viewer = viewer
        bearer = None
        scheme, _, value = (connection.headers.get("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            bearer = value.strip()
        header_key = (connection.headers.get("x-agent-key") or "").strip()
        self.agent_key = header_key or (
            bearer if bearer and agents.looks_like_agent_key(bearer) else None
        )
        if bearer is None and not header_key:
            bearer = play_session.cookie_token(connection)  # the players' pages (api/play)
        self.token = None if self.agent_key else bearer
        self.expires_at: float | None = None
        if self.token is not None:
            # Verified at connect (the route's dependency), so its claims are the token's.
            claims = jwt.decode(self.token, options={"verify_signature": False})
            exp = claims.get("exp")
            self.expires_at = float(exp) if isinstance(exp, int | float) else None
        self._until = 0.0
        self._lock = asyncio.Lock()
        self._card: tuple[str | None, datetime | None] | None = None
        self._told: tuple[str | None, datetime | None] | None = None

    async def check(self) -> None:
        """Raise ``unauthorized`` if the credential no longer holds (expired, revoked, or no
        longer this stream's viewer)."""
        if self.expires_at is not None and time.time() >= self.expires_at:
            raise ApiError(ErrorCode.UNAUTHORIZED, "the token has expired")
        if time.monotonic() < self._until:
            return
        async with self._lock:
            if time.monotonic() < self._until:
                return
            if self.agent_key is not None:
                agent = await agents.by_key(state_of(self.app).db, self.agent_key)
                if agent is None:
                    raise ApiError(ErrorCode.UNAUTHORIZED, "unknown or revoked agent key")
                user_id = agent.agent_id
                self._card = (agent.card_public_key, agent.card_key_changed_at)
            elif self.token is not None:
                user_id = (
                    await verify_player_token(state_of(self.app).settings, self.token)
                ).user_id
            else:
                raise ApiError(ErrorCode.UNAUTHORIZED, "the stream has no credential")
            if user_id != self.viewer:
                raise ApiError(ErrorCode.UNAUTHORIZED, "the credential changed")
            self._until = time.monotonic() + RECHECK_SECONDS

    def card_change(self) -> dict[str, Any] | None:
        """An agent's Agent Card as last read, if it changed since the stream last said so
        (the first read is where the stream starts from: nothing to say)."""
        if self._card is None or self._card == self._told:
            return None
        first = self._told is None
        self._told = self._card
        if first:
            return None
        public_key, changed_at = self._card
        return AgentCardChanged(
            agent_id=self.viewer, public_key=public_key, card_key_changed_at=changed_at
        ).to_wire()


async def ws_caller(websocket: WebSocket) -> Caller:
    """A WebSocket's caller: the same credentials as HTTP, from the handshake's headers."""
    return await current_player(
        websocket,  # type: ignore[arg-type]  # it reads .app.state and headers only
        websocket.headers.get("authorization"),
        websocket.headers.get("x-agent-key"),
    )
