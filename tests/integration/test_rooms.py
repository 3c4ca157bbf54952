"""Cash rooms end to end through the API: wait, play, pause, resume, close; the ledger; the stream.

The room plays real hands on the dev server: scripted players answer through the table's
Updates (tests/integration/bots.py), everything else goes through HTTP.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from db import ledger
from db.engine import Database
from tests.integration.bots import play
from tests.integration.helpers import admin, balance, credit, eventually, player
from wire.events import ROOM_EVENTS_BY_TYPE
from worker import build_replayer

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
        assert r.json() == {
            "seat": 1,
            "stack": 1000,
            "currency": "virtual_chips",
            "alreadySeated": False,
        }
        again = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, a))
        assert again.json()["alreadySeated"] is True and again.json()["seat"] == 1
        assert await balance(http, settings, a) == 4000
        assert (await record(http, room_id))["status"] == "waiting"

        # A second player: hands deal. Seats are numbered from 1 (seed 004).
        r = await http.post(f"/rooms/{room_id}/join", json={"seat": 3}, headers=player(settings, b))
        assert r.status_code == 200 and r.json()["seat"] == 3, r.text
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
            assert all(p["holeCards"] is None for p in hand["players"])
        assert (await record(http, room_id))["observerCount"] >= 1

        # b leaves: at once between hands, or 202 and at the end of the hand b is in.
        r = await http.post(f"/rooms/{room_id}/leave", headers=player(settings, b))
        assert r.status_code in (200, 202), r.text
        if r.status_code == 202:
            assert r.json()["pending"] is True and r.json()["returned"] is None
            leaving = {p["handle"]: p["status"] for p in (await record(http, room_id))["players"]}
            assert (
                leaving.get(f"@{b}", "leaving") == "leaving"
            )  # gone already if the hand just ended
            await play(
                client,
                workflow_id(room_id),
                [a, b],
                until=lambda v: all(s.player_id != b for s in v.seats),
            )
        paused = await eventually(lambda: status_is(http, room_id, "paused"))
        assert [p["handle"] for p in paused["players"]] == [f"@{a}"]
        stack_a = paused["players"][0]["stack"]
        # Every chip is a user's or a seat's: b's stack came home, a's is in a's seat account.
        assert await balance(http, settings, b) + stack_a == 2 * 5000 - 4000  # a's balance: 4000
        assert await chips_in_room(db, room_id, users) == stack_a

        # c joins: play resumes.
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, c))
        assert r.status_code == 200, r.text
        await eventually(lambda: status_is(http, room_id, "playing"))
        view = await play(
            client,
            workflow_id(room_id),
            [a, c],
            until=lambda v: v.hand_no >= paused["handNumber"] + 2,
        )

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
        assert {
            "player_join",
            "hand_start",
            "action",
            "pot_update",
            "hand_result",
            "player_leave",
            "room_status",
        } <= types
        for e in events["events"]:
            assert "hole_cards" not in e["data"] and "holeCards" not in e["data"]
            # Each event is exactly what its model (wire/events.py) describes.
            model = ROOM_EVENTS_BY_TYPE[e["type"]]
            assert model.model_validate(e["data"]).payload() == e["data"], e
        results = [e["data"] for e in events["events"] if e["type"] == "hand_result"]
        assert results and all(r["rake"] == 0 for r in results)
        assert all(r["grossPot"] == sum(r["netToWinner"].values()) for r in results)

        # Hands: listed with their settlement; the record hides unshown hole cards.
        hands = (await http.get(f"/rooms/{room_id}/hands")).json()
        assert len(hands) == closed["handNumber"]
        detail = (await http.get(f"/rooms/{room_id}/hands/1")).json()
        assert set(detail["holeCards"]) <= set(detail["shown"])
        assert detail["settlement"]["rake"] == 0

    # The recorded history (joins, leaves, hands, the close) replays deterministically.
    history = await client.get_workflow_handle(workflow_id(room_id)).fetch_history()
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    await replayer.replay_workflow(history)


async def test_refusals_are_coded_and_move_nothing(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    rich, poor, third, fourth = (f"rf-{n}-{uuid.uuid4().hex[:4]}" for n in "abcd")
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        # Creating: operators only, and bad rules are named.
        r = await http.post("/rooms", json=ROOM)
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        bad = {**ROOM, "stakes": {"smallBlind": 20, "bigBlind": 10}}
        r = await http.post("/rooms", json=bad, headers=admin(settings))
        assert r.status_code == 422 and r.json()["field"] == "stakes.bigBlind", r.text
        r = await http.post("/rooms", json={**ROOM, "seats": 10}, headers=admin(settings))
        assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
        r = await http.post(
            "/rooms", json={**ROOM, "entry": {"amount": 5}}, headers=admin(settings)
        )
        assert r.status_code == 422 and r.json()["field"] == "entry.amount", r.text

        room_id = await open_room(http, settings, seats=2)
        assert (await http.get("/rooms/room_nope")).status_code == 404
        r = await http.get("/rooms/room_nope/game-state", params={"timeout": 0})
        assert r.status_code == 404 and r.json()["code"] == "not_found", r.text
        r = await http.post("/rooms/room_nope/join", json={}, headers=player(settings, rich))
        assert r.status_code == 404 and r.json()["code"] == "not_found"

        # Too poor: refused with the code, no seat held, no chip moved.
        await credit(http, settings, poor, 999)
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, poor))
        assert r.status_code == 409 and r.json()["code"] == "insufficient_funds", r.text
        assert await balance(http, settings, poor) == 999
        assert (await record(http, room_id))["players"] == []

        for u in (rich, third, fourth):
            await credit(http, settings, u, 5000)
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 2}, headers=player(settings, rich)
        )
        assert r.status_code == 200, r.text
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 2}, headers=player(settings, third)
        )
        assert r.status_code == 409 and r.json()["code"] == "seat_taken", r.text
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 7}, headers=player(settings, third)
        )
        assert r.status_code == 422, r.text
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, third))
        assert r.status_code == 200 and r.json()["seat"] == 1, r.text
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, fourth))
        assert r.status_code == 409 and r.json()["code"] == "room_full", r.text
        assert await balance(http, settings, fourth) == 5000

        # Acting out of turn or on a stale turn is refused; leaving twice is a coded error.
        await eventually(lambda: status_is(http, room_id, "playing"))
        state = await eventually(lambda: _hand_state(http, room_id, settings, rich))
        idle = third if state["hand"]["actor"] == 1 else rich
        body = {"handNumber": state["handNumber"], "turn": state["turn"], "action": "fold"}
        r = await http.post(f"/rooms/{room_id}/action", json=body, headers=player(settings, idle))
        assert r.status_code == 409 and r.json()["code"] == "not_your_turn", r.text
        r = await http.post(f"/rooms/{room_id}/action", json=body, headers=player(settings, fourth))
        assert r.status_code == 409 and r.json()["code"] == "unknown_seat", r.text
        r = await http.post(f"/rooms/{room_id}/leave", headers=player(settings, fourth))
        assert r.status_code == 409 and r.json()["code"] == "unknown_seat", r.text

        # A seated player sees its own cards only; the stream never carries hole cards. (The
        # game state keeps the table's seat indices: rich's seat 2 is its seat 1.)
        mine = await _hand_state(http, room_id, settings, rich)
        assert mine is not None
        cards = {p["seat"]: p["holeCards"] for p in mine["hand"]["players"]}
        assert cards[1] is not None and cards[0] is None
        # Leaving during one's hand: 202, pending, and the record says "leaving" meanwhile.
        hand_no = mine["handNumber"]
        r = await http.post(f"/rooms/{room_id}/leave", headers=player(settings, idle))
        if (await _hand_state(http, room_id, settings, rich) or {}).get("handNumber") == hand_no:
            assert r.status_code == 202 and r.json() == {
                "returned": None,
                "currency": "virtual_chips",
                "pending": True,
            }, r.text
            seats = {p["handle"]: p["status"] for p in (await record(http, room_id))["players"]}
            assert seats.get(f"@{idle}", "leaving") == "leaving"
        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        await play(client, workflow_id(room_id), [rich, third], until=lambda v: v.finished)
        await eventually(lambda: status_is(http, room_id, "closed"))
        assert await balance(http, settings, rich) + await balance(http, settings, third) == 10000
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        assert r.status_code == 200 and r.json()["status"] == "closed"


async def _hand_state(
    http: httpx.AsyncClient, room_id: str, settings: Settings, user: str
) -> dict[str, Any] | None:
    r = await http.get(
        f"/rooms/{room_id}/game-state", params={"timeout": 0}, headers=player(settings, user)
    )
    assert r.status_code == 200, r.text
    state: dict[str, Any] = r.json()
    hand = state["hand"]
    return state if hand and not hand["over"] else None


async def test_requests_that_race_are_served_one_at_a_time(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    """The room's loop serves joins and leaves one by one (workflows/inbox.py): five players
    racing for two seats get two seats and three coded refusals, and a player who joins,
    leaves and joins again at once ends seated at most once with every chip accounted for."""
    racers = [f"race-{n}-{uuid.uuid4().hex[:4]}" for n in range(5)]
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        room_id = await open_room(http, settings, seats=2)
        for u in racers:
            await credit(http, settings, u, 5000)
        answers = await asyncio.gather(
            *(
                http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, u))
                for u in racers
            )
        )
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 200, 409, 409, 409], [r.text for r in answers]
        assert {r.json()["code"] for r in answers if r.status_code == 409} == {"room_full"}
        seated = {r.json()["seat"] for r in answers if r.status_code == 200}
        assert seated == {1, 2}
        winners = [u for u, r in zip(racers, answers, strict=True) if r.status_code == 200]
        for u, r in zip(racers, answers, strict=True):
            if r.status_code != 200:
                assert await balance(http, settings, u) == 5000  # nothing moved for a refusal

        # One player's join, leave and join in flight together: at most one seat, and their
        # chips are all either home or in that seat.
        hopper = winners[0]
        path = f"/rooms/{room_id}"
        await asyncio.gather(
            http.post(f"{path}/leave", headers=player(settings, hopper)),
            http.post(f"{path}/join", json={}, headers=player(settings, hopper)),
            http.post(f"{path}/leave", headers=player(settings, hopper)),
        )
        players = (await record(http, room_id))["players"]
        assert len([p for p in players if p["handle"] == hopper]) <= 1
        # Both leave (a hand in progress then ends at once: the table checks or folds for a
        # leaving player), and the room closes.
        for u in winners:
            r = await http.post(f"{path}/leave", headers=player(settings, u))
            assert r.status_code in (200, 202, 409), r.text  # 409: not seated (hopper left)
        r = await http.post(f"{path}/close", headers=admin(settings))
        assert r.status_code in (200, 202), r.text
        await eventually(lambda: status_is(http, room_id, "closed"), limit=30)

        async def all_home() -> bool:  # no rake: the two players' 10,000 chips, all home
            if await chips_in_room(db, room_id, winners):
                return False
            return sum([await balance(http, settings, u) for u in winners]) == 10_000

        await eventually(all_home)


async def test_mid_hand_joins_wait_for_the_next_hand_and_broke_players_leave(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    a, b, late = (f"mh-{n}-{uuid.uuid4().hex[:4]}" for n in "abc")
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in (a, b, late):
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        for u in (a, b):
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, u))
            assert r.status_code == 200, r.text
        state = await eventually(lambda: _hand_state(http, room_id, settings, a))
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, late))
        assert r.status_code == 200, r.text
        seated = {
            p["handle"].removeprefix("@"): p for p in (await record(http, room_id))["players"]
        }
        late_index = seated[late]["seat"] - 1  # the game state's and hand record's seat
        running = await _hand_state(http, room_id, settings, late)
        if running is not None and running["handNumber"] == state["handNumber"]:
            # Still the same hand: the newcomer waits, with no cards, and is dealt next hand.
            assert seated[late]["status"] == "waiting"
            assert all(p["seat"] != late_index for p in running["hand"]["players"])
        view = await play(
            client,
            workflow_id(room_id),
            [a, b, late],
            until=lambda v: v.hand_no > state["handNumber"] + 1,
        )
        dealt = await http.get(f"/rooms/{room_id}/hands/{state['handNumber'] + 1}")
        assert str(late_index) in dealt.json()["players"], dealt.text

        # All in every hand until someone is broke: a broke player is unseated with 0 back.
        from tests.integration.bots import shove

        view = await play(
            client,
            workflow_id(room_id),
            [a, b, late],
            shove,
            until=lambda v: len(v.seats) < 3,
            limit=60,
        )

        async def busted_leaves() -> list[dict[str, Any]]:
            # The table's view shows the seat gone at once; the room's log has the leave once
            # its activity has written it (CI-45 read the log a moment before).
            r = await http.get(f"/rooms/{room_id}/events.json", params={"limit": 500})
            return [
                e["data"]
                for e in r.json()["events"]
                if e["type"] == "player_leave" and e["data"]["reason"] == "busted"
            ]

        busted = await eventually(busted_leaves, limit=10)
        assert all(e["returned"] == 0 for e in busted)
        assert view.room is not None
        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        await play(client, workflow_id(room_id), [a, b, late], until=lambda v: v.finished)
        total = sum([await balance(http, settings, u) for u in (a, b, late)])
        assert total == 3 * 5000


async def test_a_room_continues_as_new_and_keeps_its_seats_stream_and_ledger(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    from workflows.room import HANDS_PER_RUN

    a, b = (f"can-{n}-{uuid.uuid4().hex[:4]}" for n in "ab")
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in (a, b):
            await credit(http, settings, u, 50_000)
        room_id = await open_room(http, settings, entry={"amount": 20_000})
        for u in (a, b):
            await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, u))
        view = await play(
            client,
            workflow_id(room_id),
            [a, b],
            until=lambda v: v.hand_no >= HANDS_PER_RUN + 3,
            limit=180,
        )
        handle = client.get_workflow_handle(workflow_id(room_id))
        desc = await handle.describe()
        assert desc.run_id != desc.raw_description.workflow_execution_info.first_run_id
        assert {s.player_id for s in view.seats} == {a, b}
        assert sum(s.stack for s in view.seats) == 40_000
        assert await chips_in_room(db, room_id, [a, b]) == 40_000
        events = (await http.get(f"/rooms/{room_id}/events.json", params={"limit": 500})).json()
        starts = [e["data"]["handNumber"] for e in events["events"] if e["type"] == "hand_start"]
        assert starts == sorted(set(starts)) and starts[0] == 1
        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        await play(client, workflow_id(room_id), [a, b], until=lambda v: v.finished)
        assert await balance(http, settings, a) + await balance(http, settings, b) == 100_000


async def test_the_room_stream_is_sse_resumable_and_counts_its_watcher(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    a, b = (f"ss-{n}-{uuid.uuid4().hex[:4]}" for n in "ab")
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in (a, b):
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, a))
        seen: list[dict[str, str]] = []
        async with http.stream("GET", f"/rooms/{room_id}/stream") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            # The open stream is an observer, counted in the record.
            assert (await record(http, room_id))["observerCount"] >= 1
            await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, b))
            current: dict[str, str] = {}
            async with asyncio.timeout(15):
                async for line in response.aiter_lines():
                    if not line:
                        if "data" in current:
                            seen.append(current)
                        current = {}
                        if any(e["event"] == "hand_start" for e in seen):
                            break
                    elif not line.startswith(":"):
                        name, _, value = line.partition(":")
                        current[name] = value.removeprefix(" ")
        kinds = [e["event"] for e in seen]
        assert kinds[:2] == ["player_join", "player_join"] and "hand_start" in kinds
        assert json.loads(seen[0]["data"])["player"] == a
        # Resuming after the first event starts at the second.
        r = await http.get(f"/rooms/{room_id}/events.json", params={"after": seen[0]["id"]})
        assert r.json()["events"][0]["id"] == int(seen[1]["id"])
        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        await play(client, workflow_id(room_id), [a, b], until=lambda v: v.finished)


async def test_bots_play_a_room_over_http_only_and_leave_with_their_stacks(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    from sdk.bots import random_bot, run_room_bot
    from sdk.client import SngClient

    users = [f"hb-{n}-{uuid.uuid4().hex[:4]}" for n in "abc"]
    async with SngClient(api_url, service_key=settings.key("admin")) as op:
        for u in users:
            await op.credit(u, 3000, f"hb-{u}")
        room = await op.create_room(
            "http bots",
            entry=1000,
            small_blind=5,
            big_blind=10,
            seats=3,
            speed="turbo",
            hand_pause_ms=0,
        )
        bots = [
            SngClient(api_url, token=player(settings, u)["Authorization"].split()[1]) for u in users
        ]
        try:
            async with asyncio.timeout(120):
                await asyncio.gather(
                    *(
                        run_room_bot(b, room["roomId"], random_bot, hands=4, seed=i)
                        for i, b in enumerate(bots)
                    )
                )
            final = await eventually(lambda: _empty(op, room["roomId"]), limit=30)

            assert final["handNumber"] >= 4
            assert sum([await b.balance() for b in bots]) == 3 * 3000
        finally:
            for b in bots:
                await b.aclose()
            await op.close_room(room["roomId"])


async def _empty(op: Any, room_id: str) -> dict[str, Any] | None:
    rec: dict[str, Any] = await op.room(room_id)
    return rec if not rec["players"] else None
