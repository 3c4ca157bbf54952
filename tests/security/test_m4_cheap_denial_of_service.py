"""M4 (security review): cheap requests that cost the service dear.

- ``GET /tournaments/{id}`` sent one workflow query per call: anyone could turn a loop of
  public reads into load on the worker and Temporal that plays the game. Now a replica shares
  one view per tournament, refreshed at most once a second.
- ``/metrics`` scanned the whole hands table per scrape. Now a replica reads it at most once
  per 15 s, whatever the scrape rate.
- SSE streams had no cap: one client could hold thousands open (each polls PostgreSQL).
  Now a client holds a few, an address at most half of the replica's total, and a replica a
  bounded number; one more is ``429``. A client is the identity the route verified, else the
  address (N3: tests/security/test_n3_limits_count_verified_identity.py).
- Request bodies were read whole into memory before any check. Now past 64 KiB (4 MiB for
  the codec) the answer is ``413`` before more is read.
- No request rate limit at all. Now per address and per credential (the ``limits`` library),
  past which the answer is ``429 rate_limited`` with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from tests.conftest import serve_api
from tests.integration.helpers import QUERIES, CountQueries, create, player


async def test_a_burst_of_public_reads_costs_one_query_per_second(
    settings: Settings, client: Client, db: Database
) -> None:
    from worker import WORKFLOWS, activities_for

    # The only worker on this queue counts the queries its workflows answer.
    counting = Worker(
        client,
        task_queue=settings.temporal_task_queue,
        workflows=list(WORKFLOWS),
        activities=activities_for(db),
        interceptors=[CountQueries()],
    )
    async with (
        counting,
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        tid = await create(http, settings)
        await http.get(f"/tournaments/{tid}")
        QUERIES.clear()
        started = asyncio.get_running_loop().time()
        answers = await asyncio.gather(*(http.get(f"/tournaments/{tid}") for _ in range(200)))
        seconds = asyncio.get_running_loop().time() - started
        assert all(r.status_code == 200 for r in answers)
        # One query per started second (plus the one in flight at the start), not 200.
        assert len(QUERIES) <= seconds + 2, (len(QUERIES), seconds)
        # A write through this replica is visible to the next read at once.
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=player(settings, "m4-reader")
        )
        assert r.status_code == 200, r.text
        r = await http.get(f"/tournaments/{tid}")
        assert [e["playerId"] for e in r.json()["entrants"]] == ["m4-reader"]
        # Unknown or malformed ids cost no more: a coded 404 or 422.
        assert (await http.get("/tournaments/no-such-one")).status_code == 404
        r = await http.get("/tournaments/" + "x" * 65)
        assert r.status_code == 422 and r.json()["code"] == "validation_error"


async def test_metrics_reads_the_database_at_most_every_fifteen_seconds(
    api_url: str,
) -> None:
    def reads(page: str) -> float:
        found = re.search(r"^sng_api_metrics_reads_total (\S+)$", page, re.M)
        assert found, "the replica reports how often it read the snapshot"
        return float(found.group(1))

    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        first = await http.get("/metrics")
        pages = [first, *await asyncio.gather(*(http.get("/metrics") for _ in range(50)))]
        assert all(p.status_code == 200 for p in pages)
    # Fifty-one scrapes, one read of the hands table (two if a refresh fell in between).
    assert max(reads(p.text) for p in pages) - reads(first.text) <= 1


async def test_a_client_holds_a_few_streams_and_a_body_has_a_size(
    settings: Settings, worker: Worker
) -> None:
    # One address holds at most half the replica's total (N3): 3 of 6 here.
    capped = settings.model_copy(update={"max_streams_per_client": 2, "max_streams": 6})
    async with serve_api(capped) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid = await create(http, capped)
        path = f"/tournaments/{tid}/events"
        async with (
            http.stream("GET", path) as first,
            http.stream("GET", path) as second,
        ):
            assert (first.status_code, second.status_code) == (200, 200)
            # (streamed: an uncapped server would answer 200 and never end the body)
            async with http.stream("GET", path) as third:
                assert third.status_code == 429
                assert json.loads(await third.aread())["code"] == "too_many_streams"
                assert int(third.headers["retry-after"]) >= 1
            # A credential the route does not check is no other client (security review N3):
            # a public stream counts its address, whatever headers it carries.
            other = player(capped, "m4-viewer")
            async with http.stream("GET", path, headers=other) as fourth:
                assert fourth.status_code == 429
            # A player's own stream checks it: another client, up to the address's share.
            mine = f"/tournaments/{tid}/me/stream"
            async with http.stream("GET", mine, headers=other) as fourth:
                assert fourth.status_code == 200
                late = player(capped, "m4-late")
                async with http.stream("GET", mine, headers=late) as fifth:
                    assert fifth.status_code == 429
        # Closed streams give their slots back.
        for _ in range(50):
            async with http.stream("GET", path) as again:
                if again.status_code == 200:
                    break
            await asyncio.sleep(0.1)
        assert again.status_code == 200

        # Bodies: refused past the limit, declared or chunked, before a route reads them.
        big = b'{"name": "' + b"x" * 70_000 + b'"}'
        r = await http.post(
            "/admin/tournaments", content=big, headers={"content-type": "application/json"}
        )
        assert r.status_code == 413 and r.json()["code"] == "payload_too_large", r.text

        async def chunks():  # type: ignore[no-untyped-def]
            for _ in range(100):
                yield b"x" * 1024

        r = await http.post(
            f"/tournaments/{tid}/register",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413, r.text


async def test_requests_past_a_rate_are_refused_with_retry_after(
    settings: Settings, worker: Worker
) -> None:
    limited = settings.model_copy(
        update={"rate_limit_ip": "30/10 seconds", "rate_limit_credential": "10/10 seconds"}
    )
    async with serve_api(limited) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        me = player(limited, f"m4-rate-{uuid.uuid4().hex[:6]}")
        answers = [await http.get("/me/balance", headers=me) for _ in range(12)]
        statuses = [r.status_code for r in answers]
        assert statuses[:10] == [200] * 10 and statuses[10:] == [429, 429], statuses
        refused = answers[-1]
        assert refused.json()["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 10
        # Another (verified) credential has its own budget, until the address's runs out too.
        other = player(limited, "m4-rate-other")
        assert (await http.get("/me/balance", headers=other)).status_code == 200
        statuses = [(await http.get("/tournaments")).status_code for _ in range(30)]
        assert 429 in statuses and statuses[0] == 200, statuses
        assert (await http.get("/healthz")).status_code == 200  # probes are never limited
