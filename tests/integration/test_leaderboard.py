"""The leaderboard and the activity feed (issue 29), end to end on one shared play-through.

One module fixture plays a two-seat tournament with shoving bots (to its closing: payouts
settled) and a few cash-room hands, through the real API and worker; each test reads what the
publications left behind. The expected figures come from what the game itself recorded (the
hand rows, the payout intents, the seat accounts), not from the leaderboard's own code.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlmodel import select
from temporalio.testing import WorkflowEnvironment

from activities.events import EventActivities
from activities.persistence import PersistenceActivities
from activities.rooms import RoomActivities
from core.codec import codec_for
from core.settings import Settings
from db import ledger
from db.engine import Database
from db.models import Hand, PayoutIntent
from tests.conftest import serve_api
from tests.integration.bots import play, shove
from tests.integration.helpers import admin, credit, eventually, player
from wire.messages import EventInput, HandRow
from wire.table_messages import RoomHandInput

pytestmark = pytest.mark.slow

ENTRY_FEE = 100
ROOM_ENTRY = 1000


@dataclass
class Played:
    url: str
    settings: Settings
    tid: str
    users: list[str]
    room_id: str
    room_users: list[str]


async def _until(http: httpx.AsyncClient, path: str, field: str, wanted: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        body: dict[str, Any] = (await http.get(path)).json()
        return body if body.get(field) == wanted else None

    return await eventually(check, 60)


@pytest.fixture(scope="module")
async def played(
    temporal_env: WorkflowEnvironment, db: Database, migrated_url: str
) -> AsyncIterator[Played]:
    from worker import build_worker

    task_queue = f"tq-{uuid.uuid4().hex[:12]}"
    config = temporal_env.client.service_client.config
    settings = Settings(
        env="test",
        temporal_address=config.target_host,
        temporal_task_queue=task_queue,
        database_url=migrated_url,
        rate_limit_ip="",
        rate_limit_credential="",
        max_streams_per_client=64,
    )
    tag = uuid.uuid4().hex[:6]
    users = [f"lb-{tag}-t{i}" for i in range(2)]
    room_users = [f"lb-{tag}-r{i}" for i in range(2)]
    client = temporal_env.client
    async with build_worker(client, db, task_queue), serve_api(settings) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            body = {
                "name": "leaderboard",
                "handPauseMs": 0,
                "settings": {
                    "seats": 2,
                    "entryFee": ENTRY_FEE,
                    "startingStack": 200,
                    "actionTimeoutSeconds": 30,
                    "blindStructure": {
                        "startingSmallBlind": 10,
                        "increaseFactor": 1.5,
                        "levelDurationSeconds": 600,
                    },
                },
            }
            r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
            assert r.status_code == 201, r.text
            tid = str(r.json()["tournamentId"])
            for user in users:
                await credit(http, settings, user, 1000)
                headers = player(settings, user)
                r = await http.post(f"/tournaments/{tid}/register", json={}, headers=headers)
                assert r.status_code == 200, r.text
                r = await http.post(
                    f"/tournaments/{tid}/pay", json={"amount": ENTRY_FEE}, headers=headers
                )
                assert r.status_code == 200, r.text
            playing = await _until(http, f"/tournaments/{tid}", "state", "playing")
            await play(client, playing["tableWorkflowId"], users, shove)
            await _until(http, f"/tournaments/{tid}", "state", "closed")

            room = {
                "name": "leaderboard room",
                "entry": {"amount": ROOM_ENTRY, "currency": "virtual_chips"},
                "stakes": {"smallBlind": 5, "bigBlind": 10},
                "seats": 2,
                "speed": "turbo",
                "handPauseMs": 0,
            }
            r = await http.post("/rooms", json=room, headers=admin(settings))
            assert r.status_code == 201, r.text
            room_id = str(r.json()["roomId"])
            for user in room_users:
                await credit(http, settings, user, 5000)
                r = await http.post(
                    f"/rooms/{room_id}/join", json={}, headers=player(settings, user)
                )
                assert r.status_code == 200, r.text
            room_wf = f"room-{room_id.removeprefix('room_')}"
            await play(client, room_wf, room_users, until=lambda v: v.hand_no >= 4)
            r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
            assert r.status_code == 200, r.text
            await _until(http, f"/rooms/{room_id}", "status", "closed")
        yield Played(url, settings, tid, users, room_id, room_users)


def _expected(hands: list[Hand], *, room: bool) -> dict[str, dict[str, int]]:
    """Each player's hands, biggest pot and (in a room) net, from the recorded hands."""
    out: dict[str, dict[str, int]] = {}
    for hand in hands:
        rec = hand.record
        for seat in rec["seats"]:
            name = rec["players"][str(seat)]
            row = out.setdefault(name, {"hands": 0, "biggest": 0, "net": 0})
            row["hands"] += 1
            won = sum(int(p["winners"].get(str(seat), 0)) for p in rec["pots"])
            row["biggest"] = max(row["biggest"], won)
            if room:
                row["net"] += rec["stacks_after"][str(seat)] - rec["stacks_before"][str(seat)]
    return out


async def _board(http: httpx.AsyncClient, **params: Any) -> dict[str, dict[str, Any]]:
    r = await http.get("/leaderboard", params={"limit": 500, **params})
    assert r.status_code == 200, r.text
    return {e["playerId"]: e for e in r.json()["entries"]}


async def test_the_leaderboard_counts_tournaments_and_room_hands(
    played: Played, db: Database
) -> None:
    async with db.session() as s:
        t_hands = list((await s.exec(select(Hand).where(Hand.tournament_id == played.tid))).all())
        r_hands = list(
            (
                await s.exec(
                    select(Hand).where(
                        Hand.table_id == f"room-{played.room_id.removeprefix('room_')}"
                    )
                )
            ).all()
        )
        intents = list(
            (
                await s.exec(select(PayoutIntent).where(PayoutIntent.tournament_id == played.tid))
            ).all()
        )
    prizes = {i.player_id: i.amount for i in intents if i.status == "confirmed" and i.amount}
    assert prizes and t_hands and len(r_hands) >= 3
    async with httpx.AsyncClient(base_url=played.url, timeout=30) as http:
        board = await _board(http, kind="humans")
        t_expected = _expected(t_hands, room=False)
        for user in played.users:
            entry = board[user]
            assert entry["isAgent"] is False
            assert entry["tournamentsPlayed"] == 1
            assert entry["tournamentsItm"] == (1 if user in prizes else 0)
            assert entry["netChips"] == prizes.get(user, 0) - ENTRY_FEE
            assert entry["handsPlayed"] == t_expected[user]["hands"]
            assert entry["biggestPot"] == t_expected[user]["biggest"]
        r_expected = _expected(r_hands, room=True)
        for user in played.room_users:
            entry = board[user]
            assert entry["tournamentsPlayed"] == 0 and entry["tournamentsItm"] == 0
            assert entry["handsPlayed"] == r_expected[user]["hands"]
            assert entry["biggestPot"] == r_expected[user]["biggest"]
            assert entry["netChips"] == r_expected[user]["net"]
        # The room's net is what its hands moved: the stacks cashed out minus the entries.
        home = [await ledger.balance(db, ledger.user_account(u)) for u in played.room_users]
        assert sum(board[u]["netChips"] for u in played.room_users) == sum(home) - 2 * 5000 == 0

        # Ranked, and apart: no human among the agents; the ranking is by the figure asked.
        agents = await _board(http, kind="agents")
        assert not set(agents) & set(played.users + played.room_users)
        r = await http.get("/leaderboard", params={"kind": "all", "by": "hands", "limit": 500})
        figures = [e["handsPlayed"] for e in r.json()["entries"]]
        assert figures == sorted(figures, reverse=True)
        assert [e["rank"] for e in r.json()["entries"]] == list(range(1, len(figures) + 1))


async def test_bad_leaderboard_and_feed_parameters_are_coded_422(played: Played) -> None:
    async with httpx.AsyncClient(base_url=played.url, timeout=30) as http:
        for params in (
            {"kind": "robots"},
            {"by": "luck"},
            {"limit": 0},
            {"limit": 501},
        ):
            r = await http.get("/leaderboard", params=params)
            assert (r.status_code, r.json()["code"]) == (422, "validation_error"), params
        for params in ({"after": -1}, {"limit": 0}, {"after": "x"}):
            r = await http.get("/activity", params=params)
            assert (r.status_code, r.json()["code"]) == (422, "validation_error"), params


async def test_a_retried_publication_counts_once(played: Played, db: Database) -> None:
    codec = codec_for(played.settings)
    tag = uuid.uuid4().hex[:6]
    p, q = f"lb-{tag}-p", f"lb-{tag}-q"
    record = {
        "seats": [0, 1],
        "players": {"0": p, "1": q},
        "big_blind": 10,
        "stacks_before": {"0": 1000, "1": 1000},
        "stacks_after": {"0": 1500, "1": 500},
        "pots": [{"amount": 1000, "eligible": [0, 1], "winners": {"0": 1000}}],
    }
    persistence = PersistenceActivities(db, codec)
    row = HandRow(
        tournament_id=f"t-{tag}",
        table_id=f"table-{tag}",
        hand_no=1,
        level=1,
        record=record,
        eliminations=[],
    )
    assert await persistence.record_hand(row) is True
    assert await persistence.record_hand(row) is False  # the retry
    rooms = RoomActivities(db, codec)
    hand = RoomHandInput(
        room_id=f"room_{tag}",
        table_id=f"room-{tag}",
        hand_no=1,
        record=record,
        deltas={},
        memo="test",
    )
    await rooms.settle_room_hand(hand)
    await rooms.settle_room_hand(hand)
    events = EventActivities(db)
    paid = EventInput(
        tournament_id=f"t-{tag}",
        type="tournament_payout_settled",
        dedupe_key="payout:1",
        payload={"position": 1, "userId": p, "amount": 70, "txHash": None},
    )
    await events.publish_event(paid)
    await events.publish_event(paid)
    async with httpx.AsyncClient(base_url=played.url, timeout=30) as http:
        board = await _board(http)
        # One tournament hand and one room hand each, once; the room hand's +500 once.
        assert board[p]["handsPlayed"] == 2 and board[q]["handsPlayed"] == 2
        assert board[p]["netChips"] == 500 + 70 and board[q]["netChips"] == -500
        assert board[p]["biggestPot"] == 1000 and board[q]["biggestPot"] == 0
        feed = await _feed(http)
        big = [e for e in feed if e["type"] == "big_pot" and e["data"]["winners"] == [p]]
        assert len(big) == 2  # one per table: the tournament's and the room's (100 bb each)
        paid_items = [
            e for e in feed if e["type"] == "payout_settled" and e["data"]["playerId"] == p
        ]
        assert len(paid_items) == 1


async def _feed(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after = 0
    while True:
        r = await http.get("/activity", params={"after": after, "limit": 500})
        assert r.status_code == 200, r.text
        body = r.json()
        items += body["events"]
        after = body["lastEventId"]
        if not body["more"]:
            return items


async def test_the_feed_shows_start_eliminations_and_payouts_in_order(played: Played) -> None:
    async with httpx.AsyncClient(base_url=played.url, timeout=30) as http:
        feed = await _feed(http)
        mine = [e for e in feed if e["data"].get("tournamentId") == played.tid]
        kinds = [e["type"] for e in mine if e["type"] != "big_pot"]
        assert kinds == ["tournament_started", "player_eliminated", "payout_settled"], kinds
        ids = [e["id"] for e in feed]
        assert ids == sorted(ids)
        out = next(e for e in mine if e["type"] == "player_eliminated")["data"]
        assert out["place"] == 2 and out["playerId"] in played.users
        payout = next(e for e in mine if e["type"] == "payout_settled")["data"]
        assert payout["playerId"] in played.users and payout["playerId"] != out["playerId"]
        assert payout["amount"] > 0
        # Paged like the event pages: a last full page says no more.
        last = await http.get("/activity", params={"after": ids[-2], "limit": 1})
        assert last.json()["more"] is False and len(last.json()["events"]) == 1


async def test_the_feed_stream_delivers_a_new_item(played: Played, db: Database) -> None:
    tag = uuid.uuid4().hex[:6]
    async with httpx.AsyncClient(base_url=played.url, timeout=30) as http:
        feed = await _feed(http)
        after = feed[-1]["id"] if feed else 0
        seen: list[dict[str, str]] = []

        async def read() -> None:
            async with http.stream("GET", "/activity/stream", params={"after": after}) as resp:
                assert resp.status_code == 200
                assert resp.headers["content-type"].startswith("text/event-stream")
                current: dict[str, str] = {}
                async for line in resp.aiter_lines():
                    if not line:
                        if "data" in current:
                            seen.append(current)
                            if current["event"] == "player_eliminated":
                                return
                        current = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(":")
                        current[name] = value.removeprefix(" ")

        reader = asyncio.create_task(read())
        await asyncio.sleep(0.5)
        await EventActivities(db).publish_event(
            EventInput(
                tournament_id=f"t-{tag}",
                type="player_eliminated",
                dedupe_key="out:x",
                payload={"playerId": f"lb-{tag}", "place": 3, "rank": 3, "handNumber": 7},
            )
        )
        await asyncio.wait_for(reader, 20)
    item = seen[-1]
    assert json.loads(item["data"])["playerId"] == f"lb-{tag}" and int(item["id"]) > after
