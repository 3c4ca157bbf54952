"""The WebSocket protocol's schema (issue 28): ``GET /asyncapi.json`` serves an AsyncAPI 3
document of both per-player sockets, and what the server really sends matches it.

A tournament and a cash room are played from real sockets only (acting on
``action_required``, seeding every deck the game state names, with a refused act and
malformed messages among them); every frame the server sent is validated with ``jsonschema``
against the document fetched from the server, and an ``event`` the document does not
describe fails the test, so the schema cannot drift from the server. Every message the
clients sent that the server took is one the document describes, and those it refused the
document refuses too.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from collections import Counter
from typing import Any

import httpx
import pytest
from jsonschema import Draft7Validator
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import connect

from core.settings import Settings
from db.engine import Database
from tests.integration.helpers import admin, credit, player, start_paid_tournament
from tests.integration.test_player_streams import SETTINGS
from tests.integration.test_rooms import open_room

TOURNAMENT = "tournamentPlayer"
ROOM = "roomPlayer"


class Protocol:
    """The served document, as a checker of frames either way."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self._validators: dict[str, Draft7Validator] = {}

    def _message(self, channel: str, name: str) -> dict[str, Any] | None:
        ref = self.doc["channels"][channel]["messages"].get(name)
        if ref is None:
            return None
        found: dict[str, Any] = self.doc["components"]["messages"][
            ref["$ref"].removeprefix("#/components/messages/")
        ]
        return found

    def _validator(self, message: dict[str, Any]) -> Draft7Validator:
        ref = message["payload"]["$ref"]
        if ref not in self._validators:
            # The document's own $refs (#/components/schemas/...) resolve against it.
            schema = {"$ref": ref, "components": self.doc["components"]}
            self._validators[ref] = Draft7Validator(schema)
        return self._validators[ref]

    def _names(self, channel: str, action: str) -> list[str]:
        names = []
        for operation in self.doc["operations"].values():
            if operation["channel"]["$ref"] != f"#/channels/{channel}":
                continue
            if operation["action"] == action:
                refs = operation["messages"]
            elif action == "send" and "reply" in operation:
                refs = operation["reply"]["messages"]
            else:
                continue
            names += [r["$ref"].rsplit("/", 1)[1] for r in refs]
        return names

    def check_sent(self, channel: str, frame: dict[str, Any]) -> None:
        """A frame the server sent: its ``event`` is one the server sends on this channel,
        and the frame is valid against that message's schema."""
        event = frame.get("event")
        assert event in self._names(channel, "send"), f"undescribed {event!r} on {channel}"
        message = self._message(channel, event)
        assert message is not None and message["name"] == event
        errors = [e.message for e in self._validator(message).iter_errors(frame)]
        assert errors == [], (event, errors, frame)

    def accepts(self, channel: str, sent: dict[str, Any]) -> bool:
        """Whether a client message is one the document says the server receives."""
        for name in self._names(channel, "receive"):
            message = self._message(channel, name)
            assert message is not None
            if self._validator(message).is_valid(sent):
                return True
        return False


async def _protocol(url: str) -> Protocol:
    async with httpx.AsyncClient(base_url=url, timeout=15) as http:
        r = await http.get("/asyncapi.json")
    assert r.status_code == 200, r.text
    return Protocol(r.json())


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


async def test_the_asyncapi_document_is_served_and_whole(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=15) as http:
        r = await http.get("/asyncapi.json")
        openapi = (await http.get("/openapi.json")).json()
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "public" in r.headers.get("cache-control", "")
    assert "get" in openapi["paths"]["/asyncapi.json"]
    doc = r.json()
    assert doc["asyncapi"] == "3.0.0" and doc["info"]["version"]
    for ref in _refs(doc):  # every reference resolves inside the document
        assert ref.startswith("#/"), ref
        _resolve(doc, ref)
    for schema in doc["components"]["schemas"].values():  # each is a JSON Schema (draft-07)
        Draft7Validator.check_schema(schema)
    for channel, address in ((TOURNAMENT, "/tournaments/"), (ROOM, "/rooms/")):
        spec = doc["channels"][channel]
        assert spec["address"].startswith(address) and spec["address"].endswith("/me/ws")
        names = set(spec["messages"])
        assert {"act", "seed", "act_result", "seed_result", "error", "end"} <= names
        assert {"game_state", "action_required", "agent_card_changed", "hand_result"} <= names
        assert "advice" in names  # CoPilot's advice on the player's own socket
    advisor = doc["channels"]["tournamentAdvisor"]  # docs/copilot.md
    assert advisor["address"] == "/tournaments/{tournamentId}/advisor/ws"
    assert set(advisor["messages"]) == {"advice_request", "advice", "advice_result", "error", "end"}
    schemas = doc["components"]["schemas"]
    # The wire names are the models' aliases, not hand-written lists.
    assert "legalActions" in schemas["ActionRequired"]["properties"]
    assert "handNumber" in schemas["SeedResult"]["properties"]
    # rate_limited says which message it dropped.
    assert {"dropped", "retryAfterSeconds"} <= set(schemas["StreamError"]["properties"])
    assert {"index", "type", "requestId"} <= set(schemas["Dropped"]["properties"])


def test_the_checker_fails_on_an_event_the_document_does_not_describe() -> None:
    """The drift check is not vacuous: an event outside the document, a tournament event on
    the room socket, or a known event with a field its model lacks, each fail."""
    from api.ws_protocol import asyncapi_document

    protocol = Protocol(asyncapi_document("test"))
    end = {"event": "end"}
    protocol.check_sent(TOURNAMENT, end)
    with pytest.raises(AssertionError, match="undescribed"):
        protocol.check_sent(TOURNAMENT, {"event": "hand_started", "data": {}})
    with pytest.raises(AssertionError, match="undescribed"):
        protocol.check_sent(ROOM, {"id": "1-1", "event": "player_eliminated", "data": {}})
    with pytest.raises(AssertionError):
        protocol.check_sent(TOURNAMENT, {**end, "data": {"surprise": 1}})
    with pytest.raises(AssertionError):
        protocol.check_sent(
            TOURNAMENT,
            {"event": "seed_result", "data": {"hand_number": 2, "commitment": "c", "seat": 0}},
        )
    assert protocol.accepts(
        TOURNAMENT, {"type": "act", "handNumber": 1, "turn": 0, "action": "fold"}
    )
    assert not protocol.accepts(TOURNAMENT, {"type": "stand_up"})


class Player:
    """A client with only the socket: acts on every ``action_required`` (a stale act first),
    seeds every deck the game state names, sends a few malformed messages once, and records
    everything either way."""

    def __init__(self, url: str, headers: dict[str, str], room: bool) -> None:
        self.url, self.headers, self.room = url, headers, room
        self.got: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.seeded: set[int] = set()
        self.hands = 0

    async def send(self, ws: Any, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await ws.send(json.dumps(message))

    async def play(self, enough: asyncio.Event | None = None, hands: int = 0) -> None:
        async with connect(self.url, additional_headers=self.headers) as ws:
            n = 0
            for bad in ({"type": "stand_up", "requestId": "bad-type"}, {"type": "act"}):
                await self.send(ws, bad)
            async for raw in ws:
                message = json.loads(raw)
                self.got.append(message)
                if message["event"] == "end":
                    return
                if message["event"] == "game_state":
                    await self._seed(ws, message["data"])
                    if enough is not None and message["data"]["handNumber"] > hands:
                        enough.set()
                if message["event"] != "action_required":
                    continue
                data = message["data"]
                n += 1
                if n == 1:  # a stale turn: refused with a code, nothing changes
                    await self.send(
                        ws,
                        {
                            "type": "act",
                            "requestId": "stale",
                            "handNumber": data["handNumber"],
                            "turn": data["turn"] + 7,
                            "action": "fold",
                        },
                    )
                actions = data["legalActions"]["actions"]
                if self.room:
                    action = "check" if "check" in actions else "call"
                else:
                    action = "all_in" if "all_in" in actions else "call"
                await self.send(
                    ws,
                    {
                        "type": "act",
                        "requestId": n,
                        "idempotencyKey": f"k{n}",
                        "handNumber": data["handNumber"],
                        "turn": data["turn"],
                        "action": action,
                    },
                )

    async def _seed(self, ws: Any, state: dict[str, Any]) -> None:
        deck, you = state.get("nextDeck"), state.get("you") or {}
        if deck is None or you.get("seat") is None or deck["handNumber"] in self.seeded:
            return
        self.seeded.add(deck["handNumber"])
        await self.send(
            ws,
            {
                "type": "seed",
                "requestId": f"seed-{deck['handNumber']}",
                "handNumber": deck["handNumber"],
                "commitment": deck["commitment"],
                "seed": secrets.token_hex(32),
            },
        )


def _check_exchange(protocol: Protocol, channel: str, players: list[Player]) -> Counter[str]:
    """Every frame each player got is described and valid; every message the server took is
    described, and those it refused as malformed are refused by the document too."""
    seen: Counter[str] = Counter()
    for p in players:
        for frame in p.got:
            protocol.check_sent(channel, frame)
            seen[frame["event"]] += 1
            if frame["event"] == "error":
                seen[f"error:{frame['data']['code']}"] += 1
        answers = {
            f.get("requestId"): f
            for f in p.got
            if f["event"] in ("act_result", "seed_result", "error")
        }
        for sent in p.sent:
            answer = answers.get(sent.get("requestId"))
            malformed = answer is not None and answer["data"].get("code") == "validation_error"
            assert protocol.accepts(channel, sent) is not malformed, (sent, answer)
    return seen


async def test_every_frame_of_a_tournament_socket_is_in_the_schema(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    protocol = await _protocol(api_url)
    tid = f"wss-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    url = api_url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
    players = [Player(url, player(settings, f"{tid}-{n}"), room=False) for n in range(2)]
    await asyncio.wait_for(asyncio.gather(*(p.play() for p in players)), 120)
    seen = _check_exchange(protocol, TOURNAMENT, players)
    for event in (
        "game_state",
        "action_required",
        "act_result",
        "seed_result",
        "error:stale_turn",
        "error:validation_error",
        "tournament_state_changed",
        "hand_result",
        "player_eliminated",
        "tournament_ended",
        "tournament_payout_settled",
        "end",
    ):
        assert seen[event], (event, seen)


async def test_every_frame_of_a_room_socket_is_in_the_schema(
    settings: Settings, api_url: str, worker: Worker
) -> None:
    protocol = await _protocol(api_url)
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2)
        users = [f"wss-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
        for user in users:
            await credit(http, settings, user, 5000)
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, user))
            assert r.status_code == 200, r.text
        url = api_url.replace("http://", "ws://") + f"/rooms/{room_id}/me/ws"
        players = [Player(url, player(settings, u), room=True) for u in users]
        enough = asyncio.Event()
        playing = [asyncio.create_task(p.play(enough, hands=3)) for p in players]
        await asyncio.wait_for(enough.wait(), 90)
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        assert r.status_code == 200, r.text
        await asyncio.wait_for(asyncio.gather(*playing), 60)
    seen = _check_exchange(protocol, ROOM, players)
    for event in (
        "game_state",
        "action_required",
        "act_result",
        "seed_result",
        "error:stale_turn",
        "error:validation_error",
        "hand_start",
        "action",
        "hand_result",
        "room_status",
        "end",
    ):
        assert seen[event], (event, seen)


async def test_a_rate_limited_frame_is_in_the_schema(
    client: Client, db: Database, task_queue: str, settings: Settings, worker: Worker
) -> None:
    from tests.conftest import serve_api

    tid = f"wsl-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    limited = settings.model_copy(update={"rate_limit_credential": "2/second"})
    async with serve_api(limited) as url:
        protocol = await _protocol(url)
        ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
        async with connect(ws_url, additional_headers=player(settings, f"{tid}-0")) as ws:
            for n in range(6):
                await ws.send(json.dumps({"type": "act", "requestId": {"n": n}}))
            errors: list[dict[str, Any]] = []
            while len(errors) < 6:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                protocol.check_sent(TOURNAMENT, frame)
                if frame["event"] == "error":
                    errors.append(frame)
    limited_frames = [f for f in errors if f["data"]["code"] == "rate_limited"]
    assert limited_frames, errors
    assert all(f["data"]["dropped"]["type"] == "act" for f in limited_frames)
