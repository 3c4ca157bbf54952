"""N5 (security review 2026-12-03): the pre-play long-poll polled PostgreSQL 4x/s per request.

Before a tournament's table exists (``registering``), ``GET /tournaments/{id}/game-state``
with ``waitForChange`` re-read the tournament row every 0.25 s for up to 30 s, and nothing
capped concurrent long-polls: the reviewer's 250 long-polls from one token and one address
drove the database from 6 to 742 transactions a second.

Now a replica watches a pre-play tournament's row once for all its long-polls, re-read when
the read model announces a change (``NOTIFY``), and a client holds a few long-polls at a time
(``SNG_MAX_LONG_POLLS_PER_CLIENT``); one more is ``429 too_many_long_polls``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import text
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from tests.conftest import serve_api
from tests.integration.helpers import admin, create, player

WAIT = 3


async def _transactions(db: Database) -> int:
    """Transactions the test database has finished so far (commits and rollbacks: a read-only
    session ends with a rollback)."""
    await asyncio.sleep(1.5)  # each backend reports its counts at most once a second
    async with db.engine.connect() as conn:
        found = await conn.execute(
            text(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database"
                " WHERE datname = current_database()"
            )
        )
        return int(found.scalar_one())


async def _state(http: httpx.AsyncClient, tid: str, who: dict[str, str], **params: Any) -> Any:
    return await http.get(f"/tournaments/{tid}/game-state", params=params, headers=who)


async def test_many_long_polls_before_play_cost_a_bounded_number_of_reads(
    settings: Settings, worker: Worker, db: Database
) -> None:
    roomy = settings.model_copy(update={"max_long_polls_per_client": 100})
    async with serve_api(roomy) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        tid = await create(http, roomy)
        me = player(roomy, "n5-poller")
        first = await _state(http, tid, me, timeout=0)
        assert first.status_code == 200, first.text
        version = first.json()["version"]
        before = await _transactions(db)
        # 60 long-polls of WAIT seconds each on a tournament where nothing happens: the old
        # code read the row 4 times a second for each (about 720 reads).
        polls = await asyncio.gather(
            *(_state(http, tid, me, waitForChange=version, timeout=WAIT) for _ in range(60))
        )
        after = await _transactions(db)
        assert all(p.status_code == 200 for p in polls), [p.text for p in polls[:3]]
        assert {p.json()["version"] for p in polls} == {version}
        # The counter is the whole database's, so the session's worker and projections add a
        # few of their own: fewer reads than long-polls shows one watch serves them all (the
        # old code made about 12 per poll).
        assert after - before < len(polls) // 2, after - before


async def test_a_client_holds_a_few_long_polls_and_a_change_wakes_them(
    settings: Settings, worker: Worker
) -> None:
    capped = settings.model_copy(update={"max_long_polls_per_client": 2})
    async with serve_api(capped) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        tid = await create(http, capped)
        me = player(capped, "n5-greedy")
        version = (await _state(http, tid, me, timeout=0)).json()["version"]

        # Five at once from one client: two are held, the rest refused at once.
        polls = [
            asyncio.create_task(_state(http, tid, me, waitForChange=version, timeout=WAIT))
            for _ in range(5)
        ]
        answers = await asyncio.gather(*polls)
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 200, 429, 429, 429], statuses
        refused = next(a for a in answers if a.status_code == 429)
        assert refused.json()["code"] == "too_many_long_polls", refused.text
        assert int(refused.headers["retry-after"]) >= 1
        # A read that does not wait is never refused, and another client has its own share.
        assert (await _state(http, tid, me, timeout=0)).status_code == 200

        # A registration wakes the held long-polls with the new state, long before their
        # timeout; so does the tournament's cancellation.
        other = player(capped, "n5-other")
        waiting = [
            asyncio.create_task(_state(http, tid, who, waitForChange=version, timeout=30))
            for who in (me, other)
        ]
        await asyncio.sleep(0.5)
        assert not any(w.done() for w in waiting)
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=other)
        assert r.status_code == 200, r.text
        woken = await asyncio.wait_for(asyncio.gather(*waiting), 20)
        for answer in woken:
            assert answer.status_code == 200, answer.text
            assert answer.json()["version"] != version
            assert answer.json()["tournament"]["registeredCount"] == 1, answer.json()
        version = woken[0].json()["version"]
        waiting = [asyncio.create_task(_state(http, tid, me, waitForChange=version, timeout=30))]
        await asyncio.sleep(0.5)
        r = await http.post(f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(capped))
        assert r.status_code == 200, r.text
        (cancelled,) = await asyncio.wait_for(asyncio.gather(*waiting), 20)
        assert cancelled.json()["tournament"]["state"] == "cancelled", cancelled.json()
