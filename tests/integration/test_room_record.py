"""The room record and the room stream as the seed shows them (issue 28, "Room record as the seed
shows it"): seed 004's record (``roomId``, ``players[]`` with a 1-based ``seat``, an ``@``
``handle`` and the Agent Card's ``cryptoId``, ``observerCount``, ``timeouts``), the room's
audience ``kind`` with the tournaments' seat gate, and ``ws://…/rooms/{id}/stream``.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
from nacl.public import PrivateKey
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import connect

from core.settings import Settings
from sdk.client import new_card_key
from tests.api.support import agent_headers, new_agent
from tests.integration.bots import play
from tests.integration.helpers import admin, balance, credit, eventually, player
from tests.integration.test_rooms import open_room, record, workflow_id

SEED_RECORD_KEYS = {
    "roomId",
    "game",
    "variant",
    "name",
    "entry",
    "stakes",
    "seats",
    "players",
    "observerCount",
    "speed",
    "timeouts",
    "handNumber",
    "status",
    "createdAt",
}
SEED_PLAYER_KEYS = {"seat", "handle", "cryptoId", "stack", "status"}


async def _public_key(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    public = base64.b64encode(bytes(PrivateKey(new_card_key()).public_key)).decode()
    r = await http.put("/me/agent-card", json={"publicKey": public}, headers=headers)
    assert r.status_code == 200, r.text
    key: str = r.json()["publicKey"]
    return key


async def test_the_room_record_carries_the_seeds_fields_with_1_based_seats(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    human = f"rr-{uuid.uuid4().hex[:6]}"
    owner = f"rr-own-{uuid.uuid4().hex[:6]}"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        bot = await new_agent(http, settings, owner)
        bot_headers = agent_headers(bot["key"])
        key = await _public_key(http, bot_headers)
        for u in (human, owner):
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        created = await record(http, room_id)
        assert set(created) == SEED_RECORD_KEYS | {"kind"}, sorted(created)
        assert created["kind"] == "open" and created["roomId"] == room_id
        assert created["timeouts"] == {"decision": 10, "disconnectGrace": 30}
        assert created["observerCount"] == 0 and created["players"] == []

        # Seats are 1-based on the wire: 1 .. seats; 0 is no seat.
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 0}, headers=player(settings, human)
        )
        assert (r.status_code, r.json()["code"]) == (422, "validation_error"), r.text
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 3}, headers=player(settings, human)
        )
        assert r.status_code == 200 and r.json()["seat"] == 3, r.text
        again = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, human))
        assert again.json()["seat"] == 3 and again.json()["alreadySeated"] is True, again.text
        r = await http.post(f"/rooms/{room_id}/join", json={"seat": 3}, headers=bot_headers)
        assert (r.status_code, r.json()["code"]) == (409, "seat_taken"), r.text
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=bot_headers)
        assert r.status_code == 200 and r.json()["seat"] == 1, r.text

        rec = await record(http, room_id)
        assert set(rec) == SEED_RECORD_KEYS | {"kind"}
        players = {p["seat"]: p for p in rec["players"]}
        assert sorted(players) == [1, 3]
        assert all(set(p) == SEED_PLAYER_KEYS for p in rec["players"]), rec["players"]
        assert players[3]["handle"] == f"@{human}" and players[3]["cryptoId"] is None
        assert players[1]["handle"] == f"@{bot['agentId']}" and players[1]["cryptoId"] == key
        listed = next(r for r in (await http.get("/rooms")).json() if r["roomId"] == room_id)
        assert listed["players"] == rec["players"]

        # The room stream says the same seats (its events.json pages too).
        joins = await eventually(lambda: _events(http, room_id, "player_join", 2))
        assert {e["player"]: e["seat"] for e in joins} == {human: 3, bot["agentId"]: 1}
        await play(
            client, workflow_id(room_id), [human, bot["agentId"]], until=lambda v: v.hand_no >= 1
        )
        starts = await eventually(lambda: _events(http, room_id, "hand_start", 1))
        assert {s["seat"] for s in starts[0]["seats"]} == {1, 3}
        assert starts[0]["button"] in (1, 3)

        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        await play(
            client, workflow_id(room_id), [human, bot["agentId"]], until=lambda v: v.finished
        )
        leaves = await eventually(lambda: _events(http, room_id, "player_leave", 2))
        assert {e["player"]: e["seat"] for e in leaves} == {human: 3, bot["agentId"]: 1}


async def _events(
    http: httpx.AsyncClient, room_id: str, type_: str, at_least: int
) -> list[dict[str, Any]] | None:
    page = (await http.get(f"/rooms/{room_id}/events.json", params={"limit": 500})).json()
    found = [e["data"] for e in page["events"] if e["type"] == type_]
    return found if len(found) >= at_least else None


async def test_a_room_seats_only_its_audience_with_the_tournaments_refusals(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    human = f"rk-{uuid.uuid4().hex[:6]}"
    owner = f"rk-own-{uuid.uuid4().hex[:6]}"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        bot = await new_agent(http, settings, owner)
        for u in (human, owner):
            await credit(http, settings, u, 5000)
        r = await http.post(
            "/rooms",
            json={
                "name": "x",
                "entry": {"amount": 100},
                "stakes": {"smallBlind": 1, "bigBlind": 2},
                "seats": 2,
                "kind": "robots",
            },
            headers=admin(settings),
        )
        assert r.status_code == 422 and r.json()["code"] in ("validation_error", "invalid_settings")

        refused = {
            "agent": (player(settings, human), "humans_not_allowed_at_agent_table"),
            "human_only": (agent_headers(bot["key"]), "agent_not_allowed_at_human_table"),
            "copilot": (agent_headers(bot["key"]), "agent_not_allowed_at_human_table"),
        }
        for kind, (headers, code) in refused.items():
            room_id = await open_room(http, settings, kind=kind)
            assert (await record(http, room_id))["kind"] == kind
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=headers)
            assert (r.status_code, r.json()["code"]) == (409, code), (kind, r.text)
            assert (await record(http, room_id))["players"] == []
            # Refused by the join's validator: the room's history never saw it.
            history = await client.get_workflow_handle(workflow_id(room_id)).fetch_history()
            assert not [
                e
                for e in history.events
                if e.HasField("workflow_execution_update_accepted_event_attributes")
            ]
        # Nothing was reserved by a refused join.
        assert await balance(http, settings, human) == 5000
        assert await balance(http, settings, owner) == 5000

        # The right audience sits down.
        agents_room = await open_room(http, settings, kind="agent")
        r = await http.post(
            f"/rooms/{agents_room}/join", json={}, headers=agent_headers(bot["key"])
        )
        assert r.status_code == 200, r.text
        humans_room = await open_room(http, settings, kind="human_only")
        r = await http.post(f"/rooms/{humans_room}/join", json={}, headers=player(settings, human))
        assert r.status_code == 200, r.text
        for room_id in (agents_room, humans_room):
            await http.post(f"/rooms/{room_id}/close", headers=admin(settings))


async def test_the_room_stream_answers_a_websocket_with_the_rooms_updates(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    a, b = (f"rws-{n}-{uuid.uuid4().hex[:4]}" for n in "ab")
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in (a, b):
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        ws_url = api_url.replace("http://", "ws://") + f"/rooms/{room_id}/stream"
        got: list[dict[str, Any]] = []
        async with connect(ws_url) as ws:
            # The open socket is an observer, counted in the record.
            await eventually(lambda: _observed(http, room_id))
            for u in (a, b):
                r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, u))
                assert r.status_code == 200, r.text
            while not any(m["event"] == "hand_start" for m in got):
                got.append(json.loads(await ws.recv()))
            await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
            await play(client, workflow_id(room_id), [a, b], until=lambda v: v.finished)
            async for raw in ws:
                got.append(json.loads(raw))
        events = [m["event"] for m in got]
        assert events[:2] == ["player_join", "player_join"], events
        assert [m["data"]["seat"] for m in got[:2]] == [1, 2]
        assert [m["data"]["player"] for m in got[:2]] == [a, b]
        assert events[-2:] == ["room_status", "end"], events[-4:]
        assert got[-2]["data"]["status"] == "closed"
        ids = [int(m["id"]) for m in got if "id" in m]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)

        # Resuming after an id starts after it; a closed room's stream ends at once.
        async with connect(ws_url + f"?after={got[0]['id']}") as ws:
            resumed = [json.loads(raw) async for raw in ws]
        assert resumed[0]["id"] == got[1]["id"] and resumed[-1]["event"] == "end"

        # A page of another origin opens no socket here (the API's guard for every socket).
        from websockets.exceptions import InvalidStatus

        try:
            async with connect(ws_url, additional_headers={"Origin": "https://evil.example"}):
                raise AssertionError("a cross-origin page's socket was accepted")
        except InvalidStatus as refused:
            assert refused.response.status_code == 403


async def _observed(http: httpx.AsyncClient, room_id: str) -> bool:
    return bool((await record(http, room_id))["observerCount"] >= 1)
