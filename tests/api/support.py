"""Helpers for the API tests: agents through the admin route, a second API with other settings."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn

from sng.devstack import free_port
from sng.settings import Settings
from tests.integration.helpers import admin


async def new_agent(
    http: httpx.AsyncClient, settings: Settings, owner: str, *, skills: list[str] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"ownerUserId": owner, "name": f"{owner}'s bot"}
    if skills is not None:
        body["skills"] = skills
    r = await http.post("/admin/agents", json=body, headers=admin(settings))
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def agent_headers(key: str) -> dict[str, str]:
    return {"X-Agent-Key": key}


@asynccontextmanager
async def serve_api(settings: Settings) -> AsyncIterator[str]:
    """The API under uvicorn with these settings (no worker: for routes that need none)."""
    from api.app import create_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
