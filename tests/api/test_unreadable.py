"""A workflow that cannot be read answers a coded 503, never a 500 and never a hang.

The drills saw both: a query on a workflow no worker served until the client's own timeout
(``RPCError: Timeout expired`` escaping as a 500), and queries whose replay failed.
"""

from __future__ import annotations

import asyncio

import httpx

from core.settings import Settings
from tests.conftest import serve_api
from tests.integration.helpers import create, player


async def test_a_tournament_no_worker_serves_is_503_temporarily_unavailable(
    settings: Settings,
) -> None:
    # No worker polls this test's task queue: the workflow starts but nobody can answer a
    # query for it.
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        tid = await create(http, settings)
        r = await asyncio.wait_for(http.get(f"/tournaments/{tid}"), timeout=30)
        assert r.status_code == 503, r.text
        assert r.json()["code"] == "temporarily_unavailable"
        r = await asyncio.wait_for(
            http.get(f"/tournaments/{tid}/game-state", headers=player(settings, "u1")), timeout=30
        )
        assert r.status_code in (404, 409, 503), r.text  # no table yet; never a 500 or a hang
