"""Who may call what: every route the API documents (a test checks the rows cover them all)
against anonymous, the player, another player, an agent and the service key. Each cell gets a
fresh tournament or room where state matters, and no cell is a 500.

| route family                             | anonymous | player | other player | agent | service key |
|------------------------------------------|-----------|--------|--------------|-------|-------------|
| lobby, settings schema, tournament       | yes       | yes    | yes          | yes   | yes         |
| state, events, hands,                    |           |        |              |       |             |
| rooms' list, record, events, hands,      |           |        |              |       |             |
| room game state (observers), /healthz,   |           |        |              |       |             |
| leaderboard, activity feed and stream,   |           |        |              |       |             |
| chain permit info                        |           |        |              |       |             |
| register, pay, leave, stand-up, sit-in,  | 401       | yes    | yes (own)    | yes   | 401         |
| act, game state, /me, streams, room      |           |        |              |       |             |
| join, leave, sit-in, action              |           |        |              |       |             |
| /admin/*, /internal/*, /codec (!dev),    | 401       | 401    | 401          | 401   | yes         |
| opening and closing rooms                |           |        |              |       |             |
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, create, credit, eventually, player

CALLERS = ("anonymous", "player", "other", "agent", "service")
SEED = {"handNumber": 1, "commitment": "ab" * 32, "seed": "00"}
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


async def recorded(ctx: Ctx) -> dict[str, str]:
    """A fresh tournament once its row is in PostgreSQL (the hand routes read only that)."""
    names = await fresh(ctx)

    async def listed() -> bool | None:
        r = await ctx.http.get(f"/tournaments/{names['tid']}/hands")
        return True if r.status_code == 200 else None

    await eventually(listed)
    return names


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


ROOM = {
    "name": "mx room",
    "entry": {"amount": 100, "currency": "virtual_chips"},
    "stakes": {"smallBlind": 1, "bigBlind": 2},
    "seats": 3,
    "handPauseMs": 0,
}


async def room(ctx: Ctx) -> dict[str, str]:
    r = await ctx.http.post("/rooms", json=ROOM, headers=admin(ctx.settings))
    assert r.status_code == 201, r.text
    return {"rid": str(r.json()["roomId"]), "agent": ctx.agent_id}


async def player_seated(ctx: Ctx) -> dict[str, str]:
    names = await room(ctx)
    r = await ctx.http.post(
        f"/rooms/{names['rid']}/join", json={}, headers=player(ctx.settings, PLAYER)
    )
    assert r.status_code == 200, r.text
    return names


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
    Row("GET", "/tournaments/settings-schema", ANYONE),
    Row("GET", "/asyncapi.json", ANYONE),
    Row("GET", "/tournaments/{tid}", ANYONE, setup=fresh),
    Row("GET", "/tournaments/{tid}/events.json", ANYONE, setup=fresh),
    Row("GET", "/tournaments/{tid}/events", ANYONE, setup=fresh),
    Row("POST", "/tournaments/{tid}/register", (401, 200, 200, 200, 401), {}, fresh),
    # The other player and the agent hold no reserve here: a coded refusal, not a 5xx.
    Row(
        "POST",
        "/tournaments/{tid}/pay",
        (401, 200, 409, 409, 401),
        {"amount": 100},
        player_reserved,
    ),
    Row("POST", "/tournaments/{tid}/leave", (401, 200, 409, 409, 401), None, player_reserved),
    Row("POST", "/tournaments/{tid}/stand-up", (401, 200, 409, 409, 401), None, player_reserved),
    Row("GET", "/tournaments/{tid}/game-state", (401, 200, 200, 200, 401), setup=player_reserved),
    # No table is dealing before play: a coded 404 for whoever may act, 401 for the rest.
    Row(
        "POST",
        "/tournaments/{tid}/act",
        (401, 404, 404, 404, 401),
        {"handNumber": 1, "turn": 0, "action": "fold"},
        player_reserved,
    ),
    Row("GET", "/me/balance", (401, 200, 200, 200, 401)),
    Row("GET", "/me/agents", (401, 200, 200, 200, 401)),
    # The faucet exists only in dev mode; the tests run as env=test.
    Row("POST", "/me/faucet", (401, 403, 403, 403, 401), {"amount": 10}),
    Row("POST", "/me/wallets/challenge", (401, 200, 200, 200, 401), {"address": "0x" + "ab" * 20}),
    # Nobody holds this challenge: a coded refusal for the signed-in, 401 for the rest.
    Row(
        "POST",
        "/me/wallets",
        (401, 422, 422, 422, 401),
        {"nonce": "0" * 32, "signature": "0x" + "11" * 65},
    ),
    Row("GET", "/me/wallets", (401, 200, 200, 200, 401)),
    # Only an agent has an Agent Card.
    Row("GET", "/me/agent-card", (401, 403, 403, 200, 401)),
    Row("PUT", "/me/agent-card", (401, 403, 403, 200, 401), {"publicKey": "Ag" + "A" * 41 + "="}),
    Row("DELETE", "/me/agent-card/public-key", (401, 403, 403, 200, 401)),
    Row("DELETE", "/me/wallets/{address}", (401, 404, 404, 404, 401)),
    Row(
        "POST",
        "/admin/tournaments",
        (*SERVICE, 201),
        {
            "name": "mx",
            "settings": {
                "seats": 2,
                "entryFee": 10,
                "startingStack": 100,
                "blindStructure": {
                    "startingSmallBlind": 1,
                    "increaseFactor": 2,
                    "levelDurationSeconds": 60,
                },
                "actionTimeoutSeconds": 10,
            },
        },
    ),
    Row("POST", "/admin/tournaments/{tid}/cancel", (*SERVICE, 200), {}, fresh),
    Row(
        "POST",
        "/admin/ledger/credit",
        (*SERVICE, 200),
        {"userId": "mx-x", "amount": 1, "idempotencyKey": "mx"},
    ),
    Row("GET", "/admin/accounts/{account}/balance", (*SERVICE, 200)),
    Row("POST", "/admin/force-end-tournament", (*SERVICE, 409), {"tableId": "{tid}"}, fresh),
    Row("POST", "/admin/agents", (*SERVICE, 201), {"ownerUserId": "mx-x", "name": "mx"}),
    Row("GET", "/admin/agents", (*SERVICE, 200)),
    Row("GET", "/admin/agents/{agent}", (*SERVICE, 200), setup=fresh),
    Row("POST", "/admin/agents/{agent}/revoke", (*SERVICE, 200), setup=throwaway_agent),
    Row(
        "POST",
        "/internal/tournament-register",
        (*SERVICE, 200),
        {"tableId": "{tid}", "agentId": "{agent}"},
        fresh,
    ),
    Row(
        "POST",
        "/internal/tournament-unregister",
        (*SERVICE, 200),
        {"tableId": "{tid}", "agentId": "{agent}"},
        agent_reserved,
    ),
    Row("POST", "/codec/decode", (*SERVICE, 200), {"payloads": []}),
    Row("POST", "/codec/encode", (*SERVICE, 200), {"payloads": []}),
    Row("GET", "/healthz", ANYONE),
    Row("GET", "/admin/tournaments", (*SERVICE, 200)),
    Row("GET", "/admin/tournaments/{tid}", (*SERVICE, 200), setup=fresh),
    Row("POST", "/admin/tournaments/{tid}/payouts/retry", (*SERVICE, 409), {}, fresh),
    Row("GET", "/tournaments/{tid}/hands", ANYONE, setup=recorded),
    Row("GET", "/tournaments/{tid}/hands/{hand}", (404, 404, 404, 404, 404), setup=recorded),
    Row("GET", "/tournaments/{tid}/hands/{hand}/phh", (404, 404, 404, 404, 404), setup=recorded),
    Row("GET", "/tournaments/{tid}/me/stream", (401, 200, 200, 200, 401), setup=player_reserved),
    Row("POST", "/tournaments/{tid}/sit-in", (401, 404, 404, 404, 401), None, player_reserved),
    # No table before play: nothing takes a seed yet.
    Row("POST", "/tournaments/{tid}/seed", (401, 404, 404, 404, 401), SEED, player_reserved),
    # Cash rooms (docs/rooms.md): operators open and close them, players and agents sit.
    Row("POST", "/rooms", (*SERVICE, 201), ROOM),
    Row("GET", "/rooms", ANYONE),
    Row("GET", "/rooms/{rid}", ANYONE, setup=room),
    Row("POST", "/rooms/{rid}/close", (*SERVICE, 200), {}, room),
    Row("POST", "/rooms/{rid}/join", (401, 200, 200, 200, 401), {}, room),
    Row("POST", "/rooms/{rid}/leave", (401, 200, 409, 409, 401), None, player_seated),
    Row("POST", "/rooms/{rid}/sit-in", (401, 409, 409, 409, 401), None, player_seated),
    # A room waiting for a second player has no deck committed; the others have no seat.
    Row("POST", "/rooms/{rid}/seed", (401, 409, 409, 409, 401), SEED, player_seated),
    Row(
        "POST",
        "/rooms/{rid}/action",
        (401, 409, 409, 409, 401),
        {"handNumber": 1, "turn": 0, "action": "fold"},
        player_seated,
    ),
    Row("GET", "/rooms/{rid}/game-state", ANYONE, setup=player_seated),
    Row("GET", "/rooms/{rid}/events.json", ANYONE, setup=room),
    Row("GET", "/rooms/{rid}/stream", ANYONE, setup=room),
    Row("GET", "/rooms/{rid}/me/stream", (401, 200, 200, 200, 401), setup=player_seated),
    Row("GET", "/rooms/{rid}/hands", ANYONE, setup=room),
    Row("GET", "/rooms/{rid}/hands/{hand}", (404, 404, 404, 404, 404), setup=room),
    Row("GET", "/leaderboard", ANYONE),
    Row("GET", "/activity", ANYONE),
    Row("GET", "/activity/stream", ANYONE),
    # The matrix's deployment pays entries from the virtual balance: no chain to name.
    Row("GET", "/chain/permit-info", (404, 404, 404, 404, 404)),
]
NOT_HTTP = {
    # WebSockets are not in the OpenAPI document; their credential rules (4401, 4404, 4429)
    # are tested in tests/integration/test_player_streams.py.
}


def fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


async def call(
    http: httpx.AsyncClient, row: Row, path: str, body: Any, headers: dict[str, str]
) -> httpx.Response:
    if path.endswith(("/events", "/stream")):
        # The stream would stay open: the status line is the answer.
        async with http.stream("GET", path, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
            return response
    return await http.request(row.method, path, json=body, headers=headers)


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def test_the_matrix_has_a_row_for_every_route_the_api_documents() -> None:
    """ "Every route" means every one: a route added without a row here fails this test."""
    from api.app import create_app

    documented = {
        (method.upper(), _shape(path))
        for path, operations in create_app(Settings(env="test")).openapi()["paths"].items()
        for method in operations
    }
    assert documented - {(r.method, _shape(r.path)) for r in ROWS} == set()


async def test_every_route_against_every_caller(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=15) as http:
        for user in (PLAYER, OTHER):  # room seats reserve their entry (100) from the balance
            await credit(http, settings, user, 100_000)
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
        document = {
            _shape(route): operations
            for route, operations in (await http.get("/openapi.json")).json()["paths"].items()
        }
        undocumented = []
        for row in ROWS:
            for caller, expected in zip(CALLERS, row.expected, strict=True):
                names = {
                    "address": "0x" + "ab" * 20,
                    "hand": "1",
                    "account": f"user:{PLAYER}",
                    **await row.setup(ctx),
                }
                path, body = row.path.format(**names), fill(row.body, names)
                r = await call(http, row, path, body, credentials[caller])
                seen.setdefault((row.method, row.path), {})[caller] = r.status_code
                assert r.status_code < 500, (row.method, row.path, caller, r.text)
                if r.status_code != expected:
                    wrong.append((row.method, row.path, caller, expected, r.status_code))
                if r.status_code >= 400 and not path.startswith("/codec"):
                    assert {"code", "message"} <= set(r.json()), r.text
                    # Every error a route answered is in the OpenAPI document (api/openapi.py).
                    documented = document[_shape(row.path)]
                    if str(r.status_code) not in documented[row.method.lower()]["responses"]:
                        undocumented.append((row.method, row.path, caller, r.status_code))
        assert wrong == [], "\n".join(map(str, wrong))
        assert undocumented == [], "\n".join(map(str, undocumented))
