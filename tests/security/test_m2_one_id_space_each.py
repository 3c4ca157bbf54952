"""M2 (security review): one id space, and L2: an unbounded ``sub``.

- Players are JWT ``sub``s and agents are ``agent-<hex>`` ids, and the two lived in one id
  space: a JWT whose ``sub`` was an agent's id was that agent (its reserves, its seats, its
  ledger account). The ``sub`` was also unbounded (a 10 kB one went into workflow inputs and
  database keys). Now a user id is 1-100 printable characters and never starts with
  ``agent-``, so no token can name an agent; an agent's owner must be a user id too.
- One owner held several seats at one table (themselves plus an agent, or several agents):
  collusion. Now a tournament takes one entry per owner and a room seats an owner once,
  whichever identity asks.
- A hosted agent registered through ``/internal`` was seated as its owner, so its own key
  could not pay or act. Now it is seated as itself.
- An agent's entry came from its own account in tournaments but its owner's in rooms. Now its
  owner pays on every path (and its prize or refund goes back there).
"""

from __future__ import annotations

import uuid

import httpx

from core.settings import Settings
from core.tokens import mint_player_token
from db import ledger
from db.engine import Database
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, create, credit, player
from tests.integration.test_rooms import open_room


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


async def test_one_owner_holds_one_entry_and_its_agents_pay_from_its_account(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        owner = f"m2o-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, owner, 1_000)
        bots = [agent_headers(str((await new_agent(http, settings, owner))["key"])) for _ in "ab"]
        tid = await create(http, settings)
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=player(settings, owner)
        )
        assert r.status_code == 200, r.text
        # The owner's agents cannot take more seats at the same table.
        for bot in bots:
            r = await http.post(f"/tournaments/{tid}/register", json={}, headers=bot)
            assert r.status_code == 409, r.text
            assert r.json()["code"] == "tournament_already_registered", r.text
        assert (
            await http.post(f"/tournaments/{tid}/leave", headers=player(settings, owner))
        ).status_code == 200
        # With the owner out, one agent registers and pays: from its owner's account.
        assert (
            await http.post(f"/tournaments/{tid}/register", json={}, headers=bots[0])
        ).status_code == 200
        r = await http.post(f"/tournaments/{tid}/pay", json={"amount": 100}, headers=bots[0])
        assert r.status_code == 200, r.text
        assert await ledger.balance(db, ledger.user_account(owner)) == 900
        assert (
            await http.post(f"/tournaments/{tid}/register", json={}, headers=bots[1])
        ).status_code == 409
        r = await http.post(f"/tournaments/{tid}/leave", headers=bots[0])
        assert r.status_code == 200 and r.json()["refunded"] == 100, r.text
        assert await ledger.balance(db, ledger.user_account(owner)) == 1_000


async def test_a_hosted_agent_is_seated_as_itself_and_pays_with_its_own_key(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        owner = f"m2h-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, owner, 1_000)
        agent = await new_agent(http, settings, owner)
        tid = await create(http, settings)
        body = {"tableId": tid, "agentId": agent["agentId"]}
        r = await http.post("/internal/tournament-register", json=body, headers=admin(settings))
        assert r.status_code == 200 and r.json()["ownerUserId"] == owner, r.text
        r = await http.get(f"/tournaments/{tid}")
        assert [(e["playerId"], e["isAgent"]) for e in r.json()["entrants"]] == [
            (agent["agentId"], True)
        ]
        key = agent_headers(str(agent["key"]))
        r = await http.post(f"/tournaments/{tid}/pay", json={"amount": 100}, headers=key)
        assert r.status_code == 200 and r.json()["status"] == "paid", r.text
        assert await ledger.balance(db, ledger.user_account(owner)) == 900
        # Its owner cannot take a second seat beside it.
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=player(settings, owner)
        )
        assert r.status_code == 409 and r.json()["code"] == "tournament_already_registered"


async def test_a_room_seats_an_owner_once(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        owner = f"m2r-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, owner, 10_000)
        bot = agent_headers(str((await new_agent(http, settings, owner))["key"]))
        room_id = await open_room(http, settings, seats=3)
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, owner))
        assert r.status_code == 200, r.text
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=bot)
        assert r.status_code == 409 and r.json()["code"] == "owner_already_seated", r.text
        r = await http.get(f"/rooms/{room_id}")
        assert len(r.json()["players"]) == 1, r.text
