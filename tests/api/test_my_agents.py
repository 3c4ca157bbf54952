"""``GET /me/agents``: the caller's own live agents, the advisors a CoPilot registration can
name (the players' pages offer them as a choice)."""

from __future__ import annotations

import httpx

from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, player


async def test_a_person_lists_their_own_live_agents_only(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        kept = await new_agent(http, settings, "lister")
        gone = await new_agent(http, settings, "lister")
        await new_agent(http, settings, "someone-else")
        r = await http.post(f"/admin/agents/{gone['agentId']}/revoke", headers=admin(settings))
        assert r.status_code == 200, r.text
        mine = await http.get("/me/agents", headers=player(settings, "lister"))
        assert mine.status_code == 200, mine.text
        assert [a["agentId"] for a in mine.json()] == [kept["agentId"]]
        assert set(mine.json()[0]) == {"agentId", "name", "skills", "keyPrefix", "createdAt"}
        # An agent's account is its owner's: it sees its owner's agents, itself included.
        as_agent = await http.get("/me/agents", headers=agent_headers(kept["key"]))
        assert [a["agentId"] for a in as_agent.json()] == [kept["agentId"]]
        nobody = await http.get("/me/agents", headers=player(settings, "no-agents-here"))
        assert nobody.json() == []
