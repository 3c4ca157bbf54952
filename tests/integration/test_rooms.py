"""Cash rooms end to end through the API: wait, play, pause, resume, close; the ledger; the stream.

The room plays real hands on the dev server: scripted players answer through the table's
Updates (tests/integration/bots.py), everything else goes through HTTP.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from db import ledger
from db.engine import Database
from sng.settings import Settings
from tests.integration.bots import play
from tests.integration.helpers import admin, balance, credit, eventually, player

ROOM = {
    "name": "test room",
    "entry": {"amount": 1000, "currency": "virtual_chips"},
    "stakes": {"smallBlind": 5, "bigBlind": 10},
    "seats": 3,
    "speed": "turbo",
    "handPauseMs": 0,
}


async def open_room(http: httpx.AsyncClient, settings: Settings, **overrides: Any) -> str:
    r = await http.post("/rooms", json={**ROOM, **overrides}, headers=admin(settings))
    assert r.status_code == 201, r.text
    return str(r.json()["roomId"])


def workflow_id(room_id: str) -> str:
    return f"room-{room_id.removeprefix('room_')}"


async def record(http: httpx.AsyncClient, room_id: str) -> dict[str, Any]:
    r = await http.get(f"/rooms/{room_id}")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def status_is(http: httpx.AsyncClient, room_id: str, wanted: str) -> dict[str, Any] | None:
    body = await record(http, room_id)
    return body if body["status"] == wanted else None


async def chips_in_room(db: Database, room_id: str, players: list[str]) -> int:
    return sum([await ledger.balance(db, ledger.room_seat_account(room_id, p)) for p in players])


async def test_a_room_waits_plays_pauses_resumes_and_closes_with_every_chip_home(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    users = [f"rm-{uuid.uuid4().hex[:6]}" for _ in range(3)]
    a, b, c = users
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in users:
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        rec = await record(http, room_id)
        assert rec["status"] == "waiting" and rec["players"] == []
        assert rec["timeouts"] == {"decision": 10, "disconnectGrace": 30}
        assert rec["game"] == "texas-holdem" and rec["variant"] == "no-limit"

        # One player: the room waits. Joining again is the same seat, reserved once.
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, a))
        assert r.status_code == 200, r.text
        assert r.json() == {"seat": 0, "stack": 1000, "currency": "virtual_chips",
                            "alreadySeated": False}  # fmt: skip
        again = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, a))
        assert again.json()["alreadySeated"] is True and again.json()["seat"] == 0
        assert await balance(http, settings, a) == 4000
        assert (await record(http, room_id))["status"] == "waiting"

        # A second player: hands deal.
        r = await http.post(f"/rooms/{room_id}/join", json={"seat": 2}, headers=player(settings, b))
        assert r.status_code == 200 and r.json()["seat"] == 2, r.text
        await eventually(lambda: status_is(http, room_id, "playing"))
        view = await play(client, workflow_id(room_id), [a, b], until=lambda v: v.hand_no >= 3)
        assert view.room is not None

        # An anonymous observer sees public play only, and is counted.
        state = (await http.get(f"/rooms/{room_id}/game-state", params={"timeout": 0})).json()
        assert "tournament" not in state and state["roomId"] == room_id
        assert state["room"]["status"] == "playing"
        hand = state["hand"]
        assert hand is not None and state["legalActions"] is None
        if not hand["over"]:
            assert all(p["hole_cards"] is None for p in hand["players"])
        assert (await record(http, room_id))["observerCount"] >= 1

        # b leaves: at once between hands, or 202 and at the end of the hand b is in.
        r = await http.post(f"/rooms/{room_id}/leave", headers=player(settings, b))
        assert r.status_code in (200, 202), r.text
        if r.status_code == 202:
            assert r.json()["pending"] is True and r.json()["returned"] is None
            await play(client, workflow_id(room_id), [a, b],
                       until=lambda v: all(s.player_id != b for s in v.seats))  # fmt: skip
        paused = await eventually(lambda: status_is(http, room_id, "paused"))
        assert [p["handle"] for p in paused["players"]] == [a]
        stack_a = paused["players"][0]["stack"]
        # Every chip is a user's or a seat's: b's stack came home, a's is in a's seat account.
        assert await balance(http, settings, b) + stack_a == 2 * 5000 - 4000  # a's balance: 4000
        assert await chips_in_room(db, room_id, users) == stack_a

        # c joins: play resumes.
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, c))
        assert r.status_code == 200, r.text
        await eventually(lambda: status_is(http, room_id, "playing"))
        view = await play(client, workflow_id(room_id), [a, c],
                          until=lambda v: v.hand_no >= paused["handNumber"] + 2)  # fmt: skip

        # The admin closes it: the hand in progress finishes, then every stack goes home.
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        assert r.status_code == 200 and r.json()["status"] in ("closing", "closed"), r.text
        await play(client, workflow_id(room_id), [a, c], until=lambda v: v.finished)
        closed = await eventually(lambda: status_is(http, room_id, "closed"))
        assert closed["players"] == []
        total = sum([await balance(http, settings, u) for u in users])
        assert total == 3 * 5000
        assert await chips_in_room(db, room_id, users) == 0

        # Closed rooms refuse joins with a code, and are listed only when asked for.
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, a))
        assert r.status_code == 409 and r.json()["code"] == "room_closed", r.text
        assert room_id not in [x["roomId"] for x in (await http.get("/rooms")).json()]
        listed = (await http.get("/rooms", params={"status": "closed"})).json()
        assert room_id in [x["roomId"] for x in listed]

        # The stream told it all, and never a hole card outside a showdown.
        events = (await http.get(f"/rooms/{room_id}/events.json", params={"limit": 500})).json()
        types = {e["type"] for e in events["events"]}
        assert {"player_join", "hand_start", "action", "pot_update", "hand_result",
                "player_leave", "room_status"} <= types  # fmt: skip
        for e in events["events"]:
            assert "hole_cards" not in e["data"] and "holeCards" not in e["data"]
        results = [e["data"] for e in events["events"] if e["type"] == "hand_result"]
        assert results and all(r["rake"] == 0 for r in results)
        assert all(r["grossPot"] == sum(r["netToWinner"].values()) for r in results)

        # Hands: listed with their settlement; the record hides unshown hole cards.
        hands = (await http.get(f"/rooms/{room_id}/hands")).json()
        assert len(hands) == closed["handNumber"]
        detail = (await http.get(f"/rooms/{room_id}/hands/1")).json()
        assert set(detail["hole_cards"]) <= set(detail["shown"])
        assert detail["settlement"]["rake"] == 0
