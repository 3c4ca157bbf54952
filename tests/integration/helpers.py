"""Small shared helpers for the integration tests (HTTP headers, polling, tournament bodies)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from api.auth import mint_player_token
from sng.settings import Settings

T = TypeVar("T")

SETTINGS: dict[str, Any] = {
    "seats": 3,
    "entryFee": 100,
    "startingStack": 1500,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 60},
    "actionTimeoutSeconds": 10,
}


def admin(settings: Settings) -> dict[str, str]:
    return {"X-Service-Key": settings.service_key}


def player(settings: Settings, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_player_token(settings, user)}"}


async def eventually(check: Callable[[], Awaitable[T | None]], limit: float = 10.0) -> T:
    deadline = asyncio.get_running_loop().time() + limit
    while True:
        result = await check()
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)


async def create(http: httpx.AsyncClient, settings: Settings, **overrides: Any) -> str:
    body = {"name": "test", "settings": {**SETTINGS, **overrides}}
    r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
    assert r.status_code == 201, r.text
    return str(r.json()["tournamentId"])


async def credit(http: httpx.AsyncClient, settings: Settings, user: str, amount: int) -> None:
    r = await http.post(
        "/admin/ledger/credit",
        json={"userId": user, "amount": amount, "idempotencyKey": f"test-{user}-{amount}"},
        headers=admin(settings),
    )
    assert r.status_code == 200, r.text


async def balance(http: httpx.AsyncClient, settings: Settings, user: str) -> int:
    r = await http.get("/me/balance", headers=player(settings, user))
    assert r.status_code == 200, r.text
    return int(r.json()["balance"])
