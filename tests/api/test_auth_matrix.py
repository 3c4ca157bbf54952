"""Who may call what: every route against anonymous, the player, another player, an agent and
the service key. Each cell gets a fresh tournament where state matters, and no cell is a 500.

| route family                          | anonymous | player | other player | agent | service key |
|---------------------------------------|-----------|--------|--------------|-------|-------------|
| lobby, tournament state, events       | yes       | yes    | yes          | yes   | yes         |
| register, pay, leave, stand-up, act,  | 401       | yes    | yes (own)    | yes   | 401         |
| game state, /me                       |           |        |              |       |             |
| /admin/*, /internal/*, /codec (!dev)  | 401       | 401    | 401          | 401   | yes         |
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, create, credit, player

CALLERS = ("anonymous", "player", "other", "agent", "service")
PLAYER, OTHER = "mx-alice", "mx-bob"


@dataclass(frozen=True)
class Ctx:
    http: httpx.AsyncClient
    settings: Settings
    agent_id: str
    """An agent owned by the player; its key is the matrix's agent credential."""


Setup = Callable[[Ctx], Awaitable[dict[str, str]]]


async def nothing(_: Ctx) -> dict[str, str]:
    return {"tid": "none", "agent": "none"}


async def fresh(ctx: Ctx) -> dict[str, str]:
    return {"tid": await create(ctx.http, ctx.settings), "agent": ctx.agent_id}


async def player_reserved(ctx: Ctx) -> dict[str, str]:
    tid = await create(ctx.http, ctx.settings)
    r = await ctx.http.post(
        f"/tournaments/{tid}/register", json={}, headers=player(ctx.settings, PLAYER)
    )
    assert r.status_code == 200, r.text
    return {"tid": tid, "agent": ctx.agent_id}


async def agent_reserved(ctx: Ctx) -> dict[str, str]:
    tid = await create(ctx.http, ctx.settings)
    r = await ctx.http.post(
        "/internal/tournament-register",
        json={"tableId": tid, "agentId": ctx.agent_id},
        headers=admin(ctx.settings),
    )
    assert r.status_code == 200, r.text
    return {"tid": tid, "agent": ctx.agent_id}


async def throwaway_agent(ctx: Ctx) -> dict[str, str]:
    spare = await new_agent(ctx.http, ctx.settings, "mx-spare")
    return {"tid": "none", "agent": str(spare["agentId"])}


@dataclass(frozen=True)
class Row:
    method: str
    path: str
    expected: tuple[int, int, int, int, int]
    """Statuses for anonymous, player, other player, agent, service key."""
    body: dict[str, Any] | None = None
    setup: Setup = nothing


ANYONE = (200, 200, 200, 200, 200)
SERVICE = 401, 401, 401, 401

ROWS = [
    Row("GET", "/tournaments", ANYONE),
    Row("GET", "/tournaments/{tid}", ANYONE, setup=fresh),
    Row("GET", "/tournaments/{tid}/events.json", ANYONE, setup=fresh),
    Row("GET", "/tournaments/{tid}/events", ANYONE, setup=fresh),
    Row("POST", "/tournaments/{tid}/register", (401, 200, 200, 200, 401), {}, fresh),
    # The other player and the agent hold no reserve here: a coded refusal, not a 5xx.
    Row("POST", "/tournaments/{tid}/pay", (401, 200, 409, 409, 401), {"amount": 100}, player_reserved),
    Row("POST", "/tournaments/{tid}/leave", (401, 200, 409, 409, 401), None, player_reserved),
    Row("POST", "/tournaments/{tid}/stand-up", (401, 200, 409, 409, 401), None, player_reserved),
    Row("GET", "/tournaments/{tid}/game-state", (401, 200, 200, 200, 401), setup=player_reserved),
    # No table is dealing before play: a coded 404 for whoever may act, 401 for the rest.
    Row("POST", "/tournaments/{tid}/act", (401, 404, 404, 404, 401), {"handNumber": 1, "turn": 0, "action": "fold"}, player_reserved),
    Row("GET", "/me/balance", (401, 200, 200, 200, 401)),
    # The faucet exists only in dev mode; the tests run as env=test.
    Row("POST", "/me/faucet", (401, 403, 403, 403, 401), {"amount": 10}),
    Row("POST", "/me/wallets/challenge", (401, 200, 200, 200, 401), {"address": "0x" + "ab" * 20}),
    # Nobody holds this challenge: a coded refusal for the signed-in, 401 for the rest.
    Row("POST", "/me/wallets", (401, 422, 422, 422, 401), {"nonce": "0" * 32, "signature": "0x" + "11" * 65}),
    Row("GET", "/me/wallets", (401, 200, 200, 200, 401)),
    Row("DELETE", "/me/wallets/0x" + "ab" * 20, (401, 404, 404, 404, 401)),
    Row("POST", "/admin/tournaments", (*SERVICE, 201), {"name": "mx", "settings": {"seats": 2, "entryFee": 10, "startingStack": 100, "blindStructure": {"startingSmallBlind": 1, "increaseFactor": 2, "levelDurationSeconds": 60}, "actionTimeoutSeconds": 10}}),
    Row("POST", "/admin/tournaments/{tid}/cancel", (*SERVICE, 200), {}, fresh),
    Row("POST", "/admin/ledger/credit", (*SERVICE, 200), {"userId": "mx-x", "amount": 1, "idempotencyKey": "mx"}),
    Row("POST", "/admin/force-end-tournament", (*SERVICE, 409), {"tableId": "{tid}"}, fresh),
    Row("POST", "/admin/agents", (*SERVICE, 201), {"ownerUserId": "mx-x", "name": "mx"}),
    Row("GET", "/admin/agents", (*SERVICE, 200)),
    Row("GET", "/admin/agents/{agent}", (*SERVICE, 200), setup=fresh),
    Row("POST", "/admin/agents/{agent}/revoke", (*SERVICE, 200), setup=throwaway_agent),
    Row("POST", "/internal/tournament-register", (*SERVICE, 200), {"tableId": "{tid}", "agentId": "{agent}"}, fresh),
    Row("POST", "/internal/tournament-unregister", (*SERVICE, 200), {"tableId": "{tid}", "agentId": "{agent}"}, agent_reserved),
    Row("POST", "/codec/decode", (*SERVICE, 200), {"payloads": []}),
]  # fmt: skip


def fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


async def call(
    http: httpx.AsyncClient, row: Row, path: str, body: Any, headers: dict[str, str]
) -> httpx.Response:
    if path.endswith("/events"):
        # The stream would stay open: the status line is the answer.
        async with http.stream("GET", path, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
            return response
    return await http.request(row.method, path, json=body, headers=headers)


async def test_every_route_against_every_caller(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=15) as http:
        await credit(http, settings, PLAYER, 1000)
        agent = await new_agent(http, settings, PLAYER)
        ctx = Ctx(http, settings, str(agent["agentId"]))
        credentials = {
            "anonymous": {},
            "player": player(settings, PLAYER),
            "other": player(settings, OTHER),
            "agent": agent_headers(str(agent["key"])),
            "service": admin(settings),
        }
        seen: dict[tuple[str, str], dict[str, int]] = {}
        wrong = []
        for row in ROWS:
            for caller, expected in zip(CALLERS, row.expected, strict=True):
                names = await row.setup(ctx)
                path, body = row.path.format(**names), fill(row.body, names)
                r = await call(http, row, path, body, credentials[caller])
                seen.setdefault((row.method, row.path), {})[caller] = r.status_code
                assert r.status_code < 500, (row.method, row.path, caller, r.text)
                if r.status_code != expected:
                    wrong.append((row.method, row.path, caller, expected, r.status_code))
                if r.status_code >= 400 and not path.startswith("/codec"):
                    assert {"code", "message"} <= set(r.json()), r.text
        assert wrong == [], "\n".join(map(str, wrong))
