"""Issue 28, "agents and money": an agent's money is its owner's account on every path.

Entries, refunds, prizes and room stacks already used the owner's account (docs/auth.md,
"Whose money"), but ``/me/balance`` and ``/me/faucet`` used the agent's own, so an agent that
funded itself from the faucet was refused its entry with ``insufficient_funds``. Operators
read any ledger account through ``GET /admin/accounts/{accountId}/balance``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from temporalio.worker import Worker

from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.conftest import serve_api
from tests.integration.helpers import admin, create, player
from tests.integration.test_rooms import open_room


@pytest.fixture
async def dev_api(settings: Settings, worker: Worker) -> AsyncIterator[str]:
    """The API as ``sng dev`` runs it (the faucet is open), with a worker."""
    async with serve_api(settings.model_copy(update={"env": "dev"})) as url:
        yield url


async def _balance(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, object]:
    r = await http.get("/me/balance", headers=headers)
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


async def test_an_agent_funded_from_the_faucet_pays_its_entries(
    dev_api: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=dev_api, timeout=30) as http:
        owner = f"am-{uuid.uuid4().hex[:6]}"
        bot = agent_headers(str((await new_agent(http, settings, owner))["key"]))
        r = await http.post("/me/faucet", json={"amount": 1_000}, headers=bot)
        assert r.status_code == 200, r.text
        tid = await create(http, settings)
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=bot)
        assert r.status_code == 200, r.text
        r = await http.post(f"/tournaments/{tid}/pay", json={"amount": 100}, headers=bot)
        assert r.status_code == 200 and r.json()["status"] == "paid", r.text
        # The agent and its owner see one account: the owner's.
        for headers in (bot, player(settings, owner)):
            body = await _balance(http, headers)
            assert (body["accountId"], body["balance"]) == (f"user:{owner}", 900), body

        room = await open_room(http, settings, entry={"amount": 500, "currency": "virtual_chips"})
        r = await http.post(f"/rooms/{room}/join", json={}, headers=bot)
        assert r.status_code == 200 and r.json()["stack"] == 500, r.text
        assert (await _balance(http, bot))["balance"] == 400
        r = await http.post(f"/rooms/{room}/leave", headers=bot)
        assert r.status_code == 200, r.text
        r = await http.post(f"/tournaments/{tid}/leave", headers=bot)
        assert r.status_code == 200 and r.json()["refunded"] == 100, r.text
        assert (await _balance(http, player(settings, owner)))["balance"] == 1_000


async def test_an_operator_reads_any_accounts_balance(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        user = f"ab-{uuid.uuid4().hex[:6]}"
        r = await http.post(
            "/admin/ledger/credit",
            json={"userId": user, "amount": 700, "idempotencyKey": f"ab-{user}"},
            headers=admin(settings),
        )
        assert r.status_code == 200, r.text
        tid = await create(http, settings)
        assert (
            await http.post(f"/tournaments/{tid}/register", json={}, headers=player(settings, user))
        ).status_code == 200
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, user)
        )
        assert r.status_code == 200, r.text

        r = await http.get(f"/admin/accounts/user:{user}/balance", headers=admin(settings))
        assert r.status_code == 200, r.text
        assert r.json() == {"accountId": f"user:{user}", "kind": "user", "balance": 600}
        r = await http.get(f"/admin/accounts/escrow:{tid}/balance", headers=admin(settings))
        assert r.status_code == 200 and r.json()["balance"] == 100, r.text

        r = await http.get("/admin/accounts/user:nobody-here/balance", headers=admin(settings))
        assert r.status_code == 404 and r.json()["code"] == "not_found", r.text
        # Players (and agents) read only their own, through /me/balance.
        r = await http.get(f"/admin/accounts/user:{user}/balance", headers=player(settings, user))
        assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text
