"""A WebSocket message is at most ``SNG_WS_MAX_MESSAGE_BYTES`` (64 KiB by default).

Our sockets take small JSON messages (``act``, ``seed``), and a reply echoes the client's
``requestId``; uvicorn's own limit is 16 MiB, so one client could make a replica parse and
echo megabytes per message (noticed while the WebSocket protocol got its schema, issue 28).
Now a bigger message closes the socket with 1009 (message too big) before any of it is parsed;
``sng api`` and the tests' servers take the same limit from the settings.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from temporalio.worker import Worker
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from core.settings import Settings
from tests.integration.test_rooms import open_room


async def test_a_message_over_the_limit_closes_the_socket_with_1009(
    settings: Settings, api_url: str, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2)
    url = api_url.replace("http://", "ws://") + f"/rooms/{room_id}/stream"
    async with connect(url) as ws:
        # A small message is answered (the room stream takes none: an error frame).
        await ws.send(json.dumps({"type": "act", "requestId": "small"}))
        for _ in range(20):
            frame = json.loads(await ws.recv())
            if frame.get("event") == "error":
                break
        else:
            raise AssertionError("no error frame for a small message")
        big = json.dumps({"type": "act", "requestId": "x" * (settings.ws_max_message_bytes + 1)})
        await ws.send(big)
        with pytest.raises(ConnectionClosed) as closed:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
            while frame.get("event") != "error":  # the room's own events may come first
                frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
            raise AssertionError(f"the server parsed it: {str(frame)[:200]}")
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009, closed.value


def test_the_limit_is_a_setting_with_a_floor() -> None:
    assert Settings(env="test").ws_max_message_bytes == 65536
    with pytest.raises(ValueError):
        Settings(env="test", ws_max_message_bytes=100)
