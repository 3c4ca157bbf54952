"""Caps on open streams (security reviews M4 and N3), and what an unread socket may hold.

A stream (SSE or WebSocket) holds a connection for as long as the client keeps it open (a
public log stream polls PostgreSQL every half second; a per-player stream waits on its table's
watch and reads the log when woken), so an uncapped client could open thousands. A stream takes a
slot only when all of these have room (one more is ``429 too_many_streams`` with
``Retry-After``, a socket closes with 4429):

- the replica: at most ``SNG_MAX_STREAMS`` streams;
- its address: at most ``SNG_MAX_STREAMS_PER_ADDRESS`` and never more than half of the
  replica's total, whoever the streams are for, so one address cannot fill the replica;
- its client: at most ``SNG_MAX_STREAMS_PER_CLIENT``. A client is the identity the API
  verified for the request (``api.ratelimit.verified_identity``: a player's or an agent's own
  stream), else the address: every anonymous stream from one address (the public event
  streams, which check no credential) is one client, whatever headers it sends. An unchecked
  header never makes a new client (security review N3: a junk ``X-Service-Key`` on each
  anonymous stream filled the replica, and players' own streams were refused).

A WebSocket's messages wait in an ``Outbox``: at most ``OTHERS`` messages and the newest game
state (a game state not yet sent is replaced by a newer one). A socket that stays at that
bound for ``STALL_SECONDS`` (its client reads nothing) is closed (1008), and its slot freed.

The sockets' shared refusals live here too: ``WS_CLOSE_CODES`` (a refused handshake's close
code) and ``stream_error`` (an ``error`` message), for the players' and the advisors' sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, deque
from collections.abc import Callable, Coroutine
from typing import Any

from starlette.requests import HTTPConnection

from api.errors import ApiError
from api.ratelimit import address_key, verified_identity
from domain.errors import ErrorCode
from wire.stream_messages import StreamError


class StreamSlots:
    def __init__(self, total: int, per_client: int, per_address: int) -> None:
        self.total = total
        self.per_client = per_client
        self.per_address = max(1, min(per_address, total // 2))
        self.clients: Counter[str] = Counter()
        self.addresses: Counter[str] = Counter()

    def acquire(self, connection: HTTPConnection) -> Callable[[], None]:
        """Take a slot for this request's client and address, or refuse; returns the
        (idempotent) release. Call it after the route checked the credential, if it has one."""
        address = address_key(connection.client.host if connection.client else "unknown")
        identity = verified_identity(connection.scope)
        client = f"id:{identity}" if identity is not None else f"ip:{address}"
        if self.clients.total() >= self.total:
            raise ApiError(
                ErrorCode.TOO_MANY_STREAMS,
                f"this server has {self.total} streams open: retry in a moment",
                retry_after_seconds=5,
            )
        if self.addresses[address] >= self.per_address:
            raise ApiError(
                ErrorCode.TOO_MANY_STREAMS,
                f"at most {self.per_address} open streams from one address: close one first",
                retry_after_seconds=5,
            )
        if self.clients[client] >= self.per_client:
            raise ApiError(
                ErrorCode.TOO_MANY_STREAMS,
                f"at most {self.per_client} open streams per client: close one first",
                retry_after_seconds=5,
            )
        self.clients[client] += 1
        self.addresses[address] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                for counter, key in ((self.clients, client), (self.addresses, address)):
                    counter[key] -= 1
                    if counter[key] <= 0:
                        del counter[key]

        return release


OTHERS = 32
"""Messages one socket holds unsent at most (log events, ``action_required``, answers, and game
states other messages follow), besides the newest game state."""
STALL_SECONDS = 30.0
"""How long a socket may stay at that bound (its client reads nothing) before it is closed."""


class Stalled(Exception):
    """The client has read nothing for ``STALL_SECONDS`` while its outbox was full."""


class Outbox:
    """A WebSocket's unsent messages, in order, with a bound on memory: at most ``others``
    messages, plus the newest game state.

    Game states supersede each other (docs/events.md): a game state that is the last unsent
    message is replaced by a newer one, so a client that reads nothing holds one game state,
    however often the state moves. A state some other message already follows stays (a
    ``hand_result`` always comes right after its hand's state) and counts among the
    ``others``. ``put`` of another message waits while ``others`` are unsent, and raises
    ``Stalled`` once it has waited ``stall_seconds``."""

    def __init__(self, others: int = OTHERS, stall_seconds: float = STALL_SECONDS) -> None:
        self.others = others
        self.stall_seconds = stall_seconds
        self._queue: deque[dict[str, Any]] = deque()
        self._changed = asyncio.Condition()

    def __len__(self) -> int:
        return len(self._queue)

    def _last_is_state(self) -> bool:
        return bool(self._queue) and self._queue[-1].get("event") == "game_state"

    async def put(self, message: dict[str, Any]) -> None:
        async with self._changed:
            if message.get("event") == "game_state":
                if self._last_is_state():
                    self._queue[-1] = message  # the older one was never sent: skip it
                else:
                    self._queue.append(message)
            else:
                try:
                    async with asyncio.timeout(self.stall_seconds):
                        await self._changed.wait_for(lambda: len(self._queue) < self.others)
                except TimeoutError:
                    raise Stalled(
                        f"{self.others} messages unread for {self.stall_seconds:g} s"
                    ) from None
                self._queue.append(message)
            self._changed.notify_all()

    async def get(self) -> dict[str, Any]:
        async with self._changed:
            await self._changed.wait_for(lambda: bool(self._queue))
            message = self._queue.popleft()
            self._changed.notify_all()
            return message


async def run_socket(
    send: Coroutine[Any, Any, None],
    pump: Coroutine[Any, Any, None],
    receive: Coroutine[Any, Any, None],
) -> bool:
    """Run a WebSocket's three tasks (deliver the outbox, fill it from the stream, answer the
    client) until one ends; when the stream ended, let the sender deliver what is queued (the
    end included) for up to 10 s. Every task is cancelled and awaited before this returns.
    True when the client stalled (read nothing while its outbox stayed full): the caller then
    closes the socket with 1008 ``too_slow``."""
    sender = asyncio.create_task(send)
    others = [asyncio.create_task(pump), asyncio.create_task(receive)]
    try:
        done, _ = await asyncio.wait([sender, *others], return_when=asyncio.FIRST_COMPLETED)
        if others[0] in done and not others[0].cancelled() and others[0].exception() is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(sender), 10)
        return any(
            t in done and not t.cancelled() and isinstance(t.exception(), Stalled) for t in others
        )
    finally:
        for task in (sender, *others):
            task.cancel()
        for task in (sender, *others):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


WS_CLOSE_CODES = {ErrorCode.UNAUTHORIZED: 4401, ErrorCode.RATE_LIMITED: 4429}
"""A refused WebSocket handshake's close code (4404 for anything else: no such tournament or
room), the players' sockets and the advisors' alike."""


def stream_error(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    """A socket's (or an SSE stream's) ``error`` message: ``{code, message, field?}``."""
    return {
        "event": "error",
        "data": StreamError(code=code, message=message, field=field).to_wire(),
    }
