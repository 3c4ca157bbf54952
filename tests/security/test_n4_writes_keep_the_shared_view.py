"""N4 (security review 2026-12-03): any write attempt dropped the shared tournament view.

``GET /tournaments/{id}`` is served from a view each replica shares, refreshed at most once a
second (M4). But every write attempt dropped it, refused ones and ones on a closed workflow
included, so alternating a refused ``POST …/leave`` with a GET made each GET a workflow query
again: on a closed tournament a full replay on a worker that also runs live tables. The
reviewer's 40 refused leaves and 40 GETs on a cancelled tournament cost 40 queries (a plain
GET loop: 1).

Now a refused write changes nothing, an accepted one refreshes the view (the writer still
reads its write), and a closed tournament (cancelled or closed, its final state already in the
read model) is served from the read model: its workflow is never queried again.
"""

from __future__ import annotations

import asyncio

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from tests.conftest import serve_api
from tests.integration.helpers import QUERIES, CountQueries, admin, create, player


def _counting_worker(client: Client, settings: Settings, db: Database) -> Worker:
    from worker import WORKFLOWS, activities_for

    # The only worker on this queue counts the queries its workflows answer.
    return Worker(
        client,
        task_queue=settings.temporal_task_queue,
        workflows=list(WORKFLOWS),
        activities=activities_for(db),
        interceptors=[CountQueries()],
    )


async def test_refused_writes_on_a_cancelled_tournament_cost_no_query(
    settings: Settings, client: Client, db: Database
) -> None:
    async with (
        _counting_worker(client, settings, db),
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        tid = await create(http, settings)
        r = await http.post(f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(settings))
        assert r.status_code == 200, r.text
        await client.get_workflow_handle(f"tournament-{tid}").result()
        QUERIES.clear()

        # The review's attack: a refused write, then a read, 40 times over, one token.
        me = player(settings, "n4-attacker")
        for _ in range(40):
            r = await http.post(f"/tournaments/{tid}/leave", headers=me)
            assert r.status_code == 409, r.text
            assert r.json()["code"] == "tournament_not_in_registration", r.text
            r = await http.get(f"/tournaments/{tid}")
            assert r.status_code == 200, r.text
            assert r.json()["state"] == "cancelled"
        # And a plain burst of reads.
        answers = await asyncio.gather(*(http.get(f"/tournaments/{tid}") for _ in range(50)))
        assert all(a.status_code == 200 for a in answers)
        # The closed workflow was never replayed for a read: its final state is published.
        assert QUERIES == [], QUERIES


async def test_refused_writes_on_a_running_tournament_keep_the_one_query_per_second(
    settings: Settings, client: Client, db: Database
) -> None:
    async with (
        _counting_worker(client, settings, db),
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        tid = await create(http, settings)
        await http.get(f"/tournaments/{tid}")
        QUERIES.clear()
        started = asyncio.get_running_loop().time()
        me = player(settings, "n4-stranger")
        for _ in range(40):
            # Not registered: the workflow refuses the leave, and nothing changes.
            r = await http.post(f"/tournaments/{tid}/leave", headers=me)
            assert r.status_code == 409, r.text
            r = await http.get(f"/tournaments/{tid}")
            assert r.status_code == 200 and r.json()["state"] == "registering", r.text
        seconds = asyncio.get_running_loop().time() - started
        # One query per started second (plus the one in flight at the start), not 40.
        assert len(QUERIES) <= seconds + 2, (len(QUERIES), seconds)

        # An accepted write refreshes the view: the writer's next read shows it.
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=player(settings, "n4-writer")
        )
        assert r.status_code == 200, r.text
        r = await http.get(f"/tournaments/{tid}")
        assert [e["playerId"] for e in r.json()["entrants"]] == ["n4-writer"]
        r = await http.post(f"/tournaments/{tid}/leave", headers=player(settings, "n4-writer"))
        assert r.status_code == 200, r.text
        r = await http.get(f"/tournaments/{tid}")
        assert r.json()["entrants"] == [] and r.json()["registeredCount"] == 0, r.text
