"""The pushed read model (docs/read-model.md), end to end: two API replicas serve one table from
PostgreSQL with no Temporal query, a long-poll on one replica wakes on an action sent through
the other, and a seat's hole cards are in the store only sealed for that seat."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from sqlmodel import select
from temporalio.client import Client
from websockets.asyncio.client import connect

from core.codec import RefusedPayloadError, codec_for
from core.settings import Settings
from db.engine import Database
from db.models import ReadState
from db.readstore import seat_binding
from tests.conftest import serve_api
from tests.integration.helpers import (
    QUERIES,
    CountQueries,
    eventually,
    heads_up,
    player,
    start_paid_tournament,
)

SETTINGS = heads_up()


@pytest.fixture
async def counting_worker(client: Client, db: Database, task_queue: str) -> Any:
    """The only worker on this queue; it counts the queries its workflows answer."""
    from worker import build_worker

    async with build_worker(client, db, task_queue, interceptors=[CountQueries()]) as w:
        yield w


async def _state(
    http: httpx.AsyncClient, settings: Settings, tid: str, user: str, **params: Any
) -> dict[str, Any]:
    r = await http.get(
        f"/tournaments/{tid}/game-state", headers=player(settings, user), params=params
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def _playing(
    client: Client, db: Database, task_queue: str, settings: Settings, url: str
) -> tuple[str, list[str]]:
    tid = f"rm-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    users = [f"{tid}-0", f"{tid}-1"]
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:

        async def dealt() -> bool | None:
            r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, users[0]))
            return True if r.status_code == 200 and r.json().get("hand") else None

        await eventually(dealt, limit=30)
    return tid, users


def _hole(state: dict[str, Any], user: str) -> list[str] | None:
    seat = next(s["seat"] for s in state["seats"] if s["playerId"] == user)
    cards: list[str] | None = next(
        p["holeCards"] for p in state["hand"]["players"] if p["seat"] == seat
    )
    return cards


async def test_two_replicas_serve_one_table_from_the_store_and_ask_temporal_nothing(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    async with (
        serve_api(settings) as url_a,
        serve_api(settings) as url_b,
        httpx.AsyncClient(base_url=url_a, timeout=30) as a,
        httpx.AsyncClient(base_url=url_b, timeout=30) as b,
    ):
        tid, users = await _playing(client, db, task_queue, settings, url_a)
        QUERIES.clear()
        for _ in range(6):
            states = {u: await _state(b, settings, tid, u) for u in users}
            for u in users:
                mine, other = (
                    _hole(states[u], u),
                    _hole(states[u], next(x for x in users if x != u)),
                )
                assert mine is not None and len(mine) == 2  # your own cards, from the sealed part
                assert other is None or states[u]["hand"]["over"]  # never another's (unshown)
            actor = next(u for u in users if states[u]["legalActions"])
            version = states[actor]["version"]
            # A long-poll on replica B, parked before the action goes through replica A.
            parked = asyncio.create_task(
                _state(b, settings, tid, actor, waitForChange=version, timeout=10)
            )
            await asyncio.sleep(0.2)
            legal = states[actor]["legalActions"]
            action = "check" if "check" in legal["actions"] else "call"
            r = await a.post(
                f"/tournaments/{tid}/act",
                headers=player(settings, actor),
                json={
                    "handNumber": states[actor]["handNumber"],
                    "turn": states[actor]["turn"],
                    "action": action,
                },
            )
            assert r.status_code == 200, r.text
            answered = r.json()["version"]
            woke = await asyncio.wait_for(parked, 10)
            assert woke["version"] != version
            # Read-your-writes on the replica that acted: never older than the answer.
            assert (await _state(a, settings, tid, actor))["version"] >= answered
        assert QUERIES == [], QUERIES  # every read above was a lookup, none a query
        # ... kept current by LISTEN, not by re-reading the store on a timer.
        assert REGISTRY.get_sample_value("sng_api_read_store_listening") == 1


async def test_the_store_holds_hole_cards_only_sealed_for_their_seat(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid, users = await _playing(client, db, task_queue, settings, url)
        states = {u: await _state(http, settings, tid, u) for u in users}
    key = f"table-{tid}-1"
    async with db.session() as session:
        row = (await session.exec(select(ReadState).where(ReadState.key == key))).one()
    stored = json.dumps({"public": row.public, "private": row.private})
    codec = codec_for(settings)
    hand_no = states[users[0]]["handNumber"]
    assert row.version >= 1 and set(row.private) == set(users)
    for u in users:
        cards = _hole(states[u], u)
        assert cards is not None
        # Neither card string is anywhere in the row: the public part has no hole cards, and
        # the private parts are ciphertext.
        assert not any(f'"{card}"' in stored for card in cards), (cards, stored)
        assert all(p["hole_cards"] is None for p in row.public["view"]["hand"]["players"])
        opened = codec.open_value(row.private[u], seat_binding(key, u, hand_no))
        assert json.loads(opened) == cards
        other = next(x for x in users if x != u)
        # Bound to its seat and hand: moved to another seat or hand, it does not open.
        with pytest.raises(RefusedPayloadError):
            codec.open_value(row.private[u], seat_binding(key, other, hand_no))
        with pytest.raises(RefusedPayloadError):
            codec.open_value(row.private[u], seat_binding(key, u, hand_no + 1))


def _short_reads() -> float:
    return REGISTRY.get_sample_value("sng_api_game_state_short_reads_total") or 0.0


async def test_the_short_way_answers_exactly_what_the_route_answers(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    """api/fastpath.py takes a game-state read only for a caller and a table this replica
    already knows, with parameters the route would accept; its body is the route's."""
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid, users = await _playing(client, db, task_queue, settings, url)
        path, headers = f"/tournaments/{tid}/game-state", player(settings, users[0])
        assert (await http.get(path, headers=headers)).status_code == 200  # token verified
        before = _short_reads()
        short = await http.get(path, headers=headers)
        assert _short_reads() == before + 1
        # FastAPI ignores an unknown parameter; the short way leaves such a request to it.
        full = await http.get(path, headers=headers, params={"other": "1"})
        assert _short_reads() == before + 1
        assert short.status_code == full.status_code == 200
        assert short.content == full.content  # nobody acts (300 s to act): one version
        assert short.headers["content-type"] == full.headers["content-type"]
        # A long-poll the short way: it waits as the route does, then answers.
        version = short.json()["version"]
        began = asyncio.get_running_loop().time()
        polled = await http.get(
            path, headers=headers, params={"waitForChange": version, "timeout": 0.3}
        )
        assert polled.status_code == 200 and polled.json()["version"] == version
        assert asyncio.get_running_loop().time() - began >= 0.3
        assert _short_reads() == before + 2
        # What the route refuses, the route refuses: the short way never answers it.
        for params in (
            {"timeout": "31"},
            {"timeout": "abc"},
            {"timeout": ""},
            {"waitForChange": "-1"},
            {"waitForChange": "1.5"},
        ):
            r = await http.get(path, headers=headers, params=params)
            assert r.status_code == 422 and r.json()["code"] == "validation_error", (params, r.text)
        r = await http.get(path, headers={"Authorization": "Bearer not-a-token"})
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        r = await http.get(path, headers={**headers, "X-Agent-Key": "agent-nothing"})
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        r = await http.get(f"/tournaments/{tid}x/game-state", headers=headers)
        assert r.status_code == 404 and r.json()["code"] == "not_found"
        assert _short_reads() == before + 2
        # Watchers (not seated, not in the standings) see what a spectator sees, one body.
        w1 = await http.get(path, headers=player(settings, f"{tid}-watcher1"))
        w2 = await http.get(path, headers=player(settings, f"{tid}-watcher2"))
        assert w1.status_code == w2.status_code == 200 and w1.content == w2.content
        assert w1.json()["you"] is None and w1.content != short.content


async def test_a_tournament_finished_before_the_read_model_is_served_from_its_workflows_once(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    """Tables that finished before the read model existed never published: the first read
    asks their workflows once and writes the store (api/backfill.py), then no read asks."""
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid, users = await _playing(client, db, task_queue, settings, url)
        headers = {u: player(settings, u) for u in users}
        for _ in range(200):  # both shove until the tournament closes
            states = {u: await _state(http, settings, tid, u) for u in users}
            if states[users[0]]["tournament"]["state"] == "closed":
                break
            actor = next((u for u in users if states[u]["legalActions"]), None)
            if actor is None:
                await asyncio.sleep(0.1)
                continue
            legal = states[actor]["legalActions"]["actions"]
            await http.post(
                f"/tournaments/{tid}/act",
                headers=headers[actor],
                json={
                    "handNumber": states[actor]["handNumber"],
                    "turn": states[actor]["turn"],
                    "action": "all_in" if "all_in" in legal else "call",
                },
            )
        final = await _state(http, settings, tid, users[0])
    assert final["tournament"]["state"] == "closed"
    keys = [f"table-{tid}-1", f"tournament-{tid}"]
    async with db.session() as session:  # as if it had finished before the release
        for row in (await session.exec(select(ReadState).where(ReadState.key.in_(keys)))).all():  # type: ignore[attr-defined]
            await session.delete(row)
        await session.commit()
    QUERIES.clear()
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        again = await _state(http, settings, tid, users[0])
        assert again["tournament"]["state"] == "closed"
        assert again["seats"] == final["seats"] and again["handNumber"] == final["handNumber"]
        asked = len(QUERIES)
        assert asked == 2, QUERIES  # the table and the tournament, once each
    async with db.session() as session:
        stored = (await session.exec(select(ReadState).where(ReadState.key.in_(keys)))).all()  # type: ignore[attr-defined]
    assert len(stored) == 2
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        assert (await _state(http, settings, tid, users[1]))["tournament"]["state"] == "closed"
    assert len(QUERIES) == asked  # another replica reads it from the store


def _composed() -> float:
    return REGISTRY.get_sample_value("sng_api_game_states_composed_total") or 0.0


async def _sse_until(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], until: str
) -> list[tuple[str, str]]:
    """An SSE stream's (event, data) up to the first ``until``, then disconnect."""
    out: list[tuple[str, str]] = []
    async with http.stream("GET", path, headers=headers) as r:
        assert r.status_code == 200
        fields: dict[str, str] = {}
        async for line in r.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
                continue
            if "event" in fields:
                out.append((fields["event"], fields.get("data", "")))
                if fields["event"] == until:
                    return out
            fields = {}
    return out


async def test_polls_and_streams_share_one_composed_game_state_per_viewer_and_version(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    """One game state per viewer and version, whoever asks (review 2026-12-03, change 2): the
    route, the SSE stream and the WebSocket send the same composed body, and every watcher
    shares the spectators' one. The streams used to compose their own from the read model
    (and parse it back for ``action_required``), beside the route's cache."""
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid, users = await _playing(client, db, task_queue, settings, url)
        states = {u: await _state(http, settings, tid, u) for u in users}  # 300 s to act
        actor = next(u for u in users if states[u]["you"]["toAct"])
        path = f"/tournaments/{tid}/game-state"
        before = _composed()
        w1 = await http.get(path, headers=player(settings, f"{tid}-watcher1"))
        assert _composed() == before + 1  # the spectators' state at this version
        w2 = await http.get(path, headers=player(settings, f"{tid}-watcher2"))
        polled = await http.get(path, headers=player(settings, actor))
        assert w1.content == w2.content and polled.json() == states[actor]
        streamed = await _sse_until(
            http, f"/tournaments/{tid}/me/stream", player(settings, actor), "action_required"
        )
        ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
        framed: list[dict[str, Any]] = []
        async with connect(ws_url, additional_headers=player(settings, actor)) as ws:
            async for raw in ws:
                framed.append(json.loads(raw))
                if framed[-1]["event"] == "action_required":
                    break
        assert _composed() == before + 1  # nothing composed again: the stream sent the poll's
    sse_state = [data for event, data in streamed if event == "game_state"]
    assert sse_state == [polled.text]
    ws_state = [m["data"] for m in framed if m["event"] == "game_state"]
    assert ws_state == [polled.json()]
    mine = polled.json()
    required = {
        "handNumber": mine["handNumber"],
        "turn": mine["turn"],
        "legalActions": mine["legalActions"],
        "deadline": mine["deadline"],
        "stack": mine["you"]["stack"],
    }
    assert json.loads(streamed[-1][1]) == framed[-1]["data"] == required
