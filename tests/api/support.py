"""Helpers for the API tests: agents through the admin route, a second API with other settings."""

from __future__ import annotations

from typing import Any

import httpx

from core.settings import Settings
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
