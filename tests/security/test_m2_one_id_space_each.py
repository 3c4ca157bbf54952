"""M2 (security review), the identity part, and L2: a player token could name an agent.

Players are JWT ``sub``s and agents are ``agent-<hex>`` ids, and the two lived in one id
space: a JWT whose ``sub`` was an agent's id was that agent (its reserves, its seats, its
ledger account). The ``sub`` was also unbounded (a 10 kB one went into workflow inputs and
database keys). Now a user id is 1-100 printable characters and never starts with ``agent-``,
so no token can name an agent; an agent's owner must be a user id too.
"""

from __future__ import annotations

import uuid

import httpx

from api.auth import mint_player_token
from sng.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, create


def _bearer(settings: Settings, sub: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_player_token(settings, sub)}"}


async def test_a_player_token_cannot_name_an_agent(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        owner = f"m2-{uuid.uuid4().hex[:6]}"
        agent = await new_agent(http, settings, owner)
        tid = await create(http, settings)
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=agent_headers(str(agent["key"]))
        )
        assert r.status_code == 200, r.text
        # A token minted (or issued by a careless IdP) with the agent's id as its sub.
        forged = _bearer(settings, str(agent["agentId"]))
        for method, path in (("POST", f"/tournaments/{tid}/leave"), ("GET", "/me/balance")):
            r = await http.request(method, path, headers=forged)
            assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text
        r = await http.get(f"/tournaments/{tid}")
        assert [e["status"] for e in r.json()["entrants"]] == ["reserved"]  # still the agent's


async def test_a_user_id_is_bounded_and_printable(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for sub in ("x" * 101, "x" * 10_000, "has space", "new\nline", "", "agent-0123456789ab"):
            r = await http.get("/me/balance", headers=_bearer(settings, sub))
            assert r.status_code == 401 and r.json()["code"] == "unauthorized", (sub[:20], r.text)
        ok = "auth0|" + "a" * 94  # an IdP's sub as it comes, at the bound
        assert (await http.get("/me/balance", headers=_bearer(settings, ok))).status_code == 200
        # An agent's owner is a user, never another agent.
        body = {"ownerUserId": "agent-0123456789ab", "name": "nested"}
        r = await http.post("/admin/agents", json=body, headers=admin(settings))
        assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
