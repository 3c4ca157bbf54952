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

from db.engine import Database
from db.models import ReadState
from db.readstore import seat_binding
from sng.codec import RefusedPayloadError, codec_for
from sng.settings import Settings
from tests.conftest import serve_api
from tests.integration.helpers import (
    QUERIES,
    CountQueries,
    eventually,
    player,
    start_paid_tournament,
)

SETTINGS = {
    "seats": 2, "entryFee": 10, "startingStack": 1000, "actionTimeoutSeconds": 300,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5,
                       "levelDurationSeconds": 600},
}  # fmt: skip


@pytest.fixture
async def counting_worker(client: Client, db: Database, task_queue: str) -> Any:
    """The only worker on this queue; it counts the queries its workflows answer."""
    from worker import build_worker

    async with build_worker(client, db, task_queue, interceptors=[CountQueries()]) as w:
        yield w


async def _state(http: httpx.AsyncClient, settings: Settings, tid: str, user: str,
                 **params: Any) -> dict[str, Any]:  # fmt: skip
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
        p["hole_cards"] for p in state["hand"]["players"] if p["seat"] == seat
    )
    return cards


async def test_two_replicas_serve_one_table_from_the_store_and_ask_temporal_nothing(
    client: Client, db: Database, task_queue: str, settings: Settings, counting_worker: Any
) -> None:
    async with serve_api(settings) as url_a, serve_api(settings) as url_b, \
            httpx.AsyncClient(base_url=url_a, timeout=30) as a, \
            httpx.AsyncClient(base_url=url_b, timeout=30) as b:  # fmt: skip
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
                f"/tournaments/{tid}/act", headers=player(settings, actor),
                json={"handNumber": states[actor]["handNumber"], "turn": states[actor]["turn"],
                      "action": action},
            )  # fmt: skip
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
