"""The event stream over real HTTP: order, live delivery, resuming, JSON pages, disconnects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from sqlalchemy import event as sqlalchemy_event
from sqlalchemy.dialects.postgresql import insert

from api import event_log
from core.settings import Settings
from db.engine import Database
from db.models import Event
from tests.integration.helpers import admin, create, eventually


async def append(db: Database, tid: str, type_: str, key: str, payload: dict[str, Any]) -> None:
    async with db.session() as session:
        await session.exec(
            insert(Event).values(tournament_id=tid, type=type_, dedupe_key=key, payload=payload)
        )
        await session.commit()


@asynccontextmanager
async def sse(
    http: httpx.AsyncClient, tid: str, *, headers: dict[str, Any] | None = None, **params: Any
) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """Open the stream; yield an iterator of parsed events ({id, event, data})."""
    async with http.stream(
        "GET", f"/tournaments/{tid}/events", params=params, headers=headers or {}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")

        async def parsed() -> AsyncIterator[dict[str, Any]]:
            current: dict[str, Any] = {}
            async for line in response.aiter_lines():
                if not line:
                    if "data" in current:
                        yield current
                    current = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    current[name] = value.removeprefix(" ")

        yield parsed()


async def take(stream: AsyncIterator[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        return [await anext(stream) for _ in range(n)]


async def page(http: httpx.AsyncClient, tid: str, **params: Any) -> dict[str, Any]:
    r = await http.get(f"/tournaments/{tid}/events.json", params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def test_stream_in_order_live_and_resumable(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as http:
        tid = await create(http, settings)
        start = await eventually(lambda: _ok(http.get(f"/tournaments/{tid}/events.json")), limit=10)
        base = int(start["lastEventId"])

        await append(db, tid, "blind_level_changed", "t:1", {"level": 1, "smallBlind": 15})
        await append(db, tid, "player_eliminated", "t:2", {"playerId": "p", "position": 3})
        async with sse(http, tid, after=base) as stream:
            first = await take(stream, 2)
            assert [e["event"] for e in first] == ["blind_level_changed", "player_eliminated"]
            assert json.loads(first[0]["data"]) == {"level": 1, "smallBlind": 15}
            ids = [int(e["id"]) for e in first]
            assert base < ids[0] < ids[1]

            # Live: an event appended while the stream is open arrives on it.
            await append(db, tid, "hand_result", "t:3", {"handNo": 7})
            [live] = await take(stream, 1)
            assert (live["event"], json.loads(live["data"])) == ("hand_result", {"handNo": 7})

            # And one the workflow publishes through its activity (the operator cancels).
            r = await http.post(
                f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(settings)
            )
            assert r.status_code == 200, r.text
            [published] = await take(stream, 1)
            assert published["event"] == "tournament_state_changed"
            assert json.loads(published["data"])["state"] == "cancelled"
            last = int(published["id"])

        # A reconnect with Last-Event-ID resumes right after it (and wins over an older ?after).
        async with sse(http, tid, headers={"Last-Event-ID": str(ids[1])}, after=base) as stream:
            resumed = await take(stream, 2)
            assert [int(e["id"]) for e in resumed] == [int(live["id"]), last]

        # A Last-Event-ID that is no id at all replays from the start instead of failing.
        for junk in ("x", "²".encode("latin-1"), "9" * 5000):
            async with sse(http, tid, headers={"Last-Event-ID": junk}) as stream:
                assert int((await take(stream, 1))[0]["id"]) <= ids[0]

        # The same log as JSON pages.
        one = await page(http, tid, after=base, limit=2)
        assert [e["type"] for e in one["events"]] == ["blind_level_changed", "player_eliminated"]
        assert (one["more"], one["lastEventId"]) == (True, ids[1])
        assert one["events"][0]["data"] == {"level": 1, "smallBlind": 15}
        two = await page(http, tid, after=one["lastEventId"], limit=2)
        assert [e["id"] for e in two["events"]] == [int(live["id"]), last]
        assert two["more"] is False  # a full last page says there is nothing after it
        empty = await page(http, tid, after=last)
        assert (empty["events"], empty["lastEventId"], empty["more"]) == ([], last, False)


async def _ok(request: Any) -> dict[str, Any] | None:
    r: httpx.Response = await request
    return r.json() if r.status_code == 200 else None


async def test_disconnect_closes_the_stream(api_url: str, settings: Settings, db: Database) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as http:
        tid = await create(http, settings)
        await eventually(lambda: _ok(http.get(f"/tournaments/{tid}/events.json")))
        await append(db, tid, "blind_level_changed", "d:1", {"level": 1})
        async with sse(http, tid) as stream:
            await take(stream, 1)
            assert event_log.open_streams >= 1
        # The client went away mid-stream: the server's generator ends, nothing lingers.
        await eventually(lambda: _true(event_log.open_streams == 0))


async def _true(value: bool) -> bool:
    return value


async def test_unknown_tournament_and_bad_cursors(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as http:
        for path in ("/tournaments/nope/events", "/tournaments/nope/events.json"):
            r = await http.get(path)
            assert (r.status_code, r.json()["code"]) == (404, "not_found")
        for params in ({"after": -1}, {"after": "x"}, {"after": 2**63}):
            r = await http.get("/tournaments/nope/events.json", params=params)
            assert (r.status_code, r.json()["code"]) == (422, "validation_error"), params


async def test_the_stream_ends_after_the_final_event_and_stays_ended(
    api_url: str, settings: Settings, db: Database
) -> None:
    """A finished tournament's stream ends after its last event instead of idling forever;
    resuming after that event is ``204 No Content``, which stops a browser's EventSource from
    reconnecting."""
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        await append(db, tid, "tournament_state_changed", "s:playing", {"state": "playing"})
        await append(db, tid, "tournament_state_changed", "s:closed", {"state": "closed"})
        async with sse(http, tid) as stream:
            async with asyncio.timeout(10):
                seen = [e async for e in stream]  # the iterator ends: the server closed it
        assert [json.loads(e["data"]).get("state") for e in seen][-2:] == ["playing", "closed"]
        final = seen[-1]["id"]
        r = await http.get(f"/tournaments/{tid}/events", headers={"Last-Event-ID": final})
        assert r.status_code == 204 and r.content == b""
        # Before the final event a resume still streams it.
        async with sse(http, tid, after=seen[-2]["id"]) as stream:
            async with asyncio.timeout(10):
                rest = [e async for e in stream]
        assert [e["id"] for e in rest] == [final]


async def test_streams_that_wake_together_share_one_page_read(db: Database) -> None:
    """Six per-player streams of one table wake on the same change and ask for the same page:
    one query answers all six (issue 30: six reads over a pool of five put the turn ~15 ms
    behind a long-poll's), and each gets every row."""
    tid = "shared-page"
    for i in range(3):
        await append(db, tid, "hand_result", f"k{i}", {"i": i})
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "FROM events" in statement:
            statements.append(statement)

    sync_engine = db.engine.sync_engine
    sqlalchemy_event.listen(sync_engine, "before_cursor_execute", count)
    try:
        pages = await asyncio.gather(
            *(event_log.read_page(db, tid, 0, event_log.PAGE) for _ in range(6))
        )
    finally:
        sqlalchemy_event.remove(sync_engine, "before_cursor_execute", count)
    assert len(statements) == 1, statements
    assert all([r.payload["i"] for r in rows] == [0, 1, 2] for rows in pages)


async def test_a_page_asked_after_a_read_began_is_read_anew(db: Database) -> None:
    """A caller never joins a read that has already started: an event committed after that
    read began, and before the caller asked, is in the caller's page."""
    tid = "shared-page-late"
    await append(db, tid, "hand_result", "k0", {"i": 0})
    first = asyncio.create_task(event_log.read_page(db, tid, 0, event_log.PAGE))
    await asyncio.sleep(0)  # the first read is asked for
    await asyncio.sleep(0)  # ... and has begun
    await append(db, tid, "hand_result", "k1", {"i": 1})
    later = await event_log.read_page(db, tid, 0, event_log.PAGE)
    assert [r.payload["i"] for r in later] == [0, 1]
    assert (await first)[0].payload["i"] == 0
