"""The public tournament record, the admin detail and the admin page read the tournament's view
from the read model (architecture review 2026-12-03, change 4: "one read source per
resource"), not from a workflow query: while it registers, starts and plays, and once it is
closed or cancelled, the view the workflow writes with its rows is its own. So reading a
tournament costs the workers nothing, and still answers while no worker does."""

from __future__ import annotations

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


async def _read_everything(http: httpx.AsyncClient, settings: Settings, tid: str) -> None:
    """The record, the admin detail and the admin page, each showing the registration."""
    r = await http.get(f"/tournaments/{tid}")
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "registering"
    assert [e["playerId"] for e in r.json()["entrants"]] == ["record-a"]
    assert r.json()["tournamentSchedule"]["prizeStructure"], r.text

    r = await http.get(f"/admin/tournaments/{tid}", headers=admin(settings))
    assert r.status_code == 200, r.text
    assert r.json()["tournament"]["registeredCount"] == 1
    assert r.json()["payoutIntents"] == []

    login = await http.post("/ui/login", data={"serviceKey": settings.key("admin")})
    assert login.status_code == 303, login.text
    page = await http.get(f"/ui/tournaments/{tid}")
    assert page.status_code == 200, page.text
    assert "record-a" in page.text


async def test_the_record_is_read_from_the_read_model_without_a_query(
    settings: Settings, client: Client, db: Database
) -> None:
    async with _counting_worker(client, settings, db):
        async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            tid = await create(http, settings)
            r = await http.post(
                f"/tournaments/{tid}/register", json={}, headers=player(settings, "record-a")
            )
            assert r.status_code == 200, r.text
            QUERIES.clear()
            await _read_everything(http, settings, tid)
            # The workflow was asked nothing: not by the record, the detail or the page.
            assert QUERIES == [], QUERIES

    # No worker runs now: a query would wait for one and fail. A new replica (nothing
    # cached) still serves the record, the detail and the page.
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        await _read_everything(http, settings, tid)
