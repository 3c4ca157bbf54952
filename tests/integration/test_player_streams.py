"""Per-player streams (docs/events.md): a tournament played from the WebSocket alone, acting on
``action_required``; the SSE stream resumed after a disconnect loses no log event."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import connect

from api.routes import player_stream
from core.settings import Settings
from db.engine import Database
from tests.integration.helpers import eventually, heads_up, player, start_paid_tournament
from wire.ids import table_workflow_id

SETTINGS = heads_up()


async def _play_over_ws(url: str, settings: Settings, tid: str, user: str) -> list[dict[str, Any]]:
    """One agent that only has the socket: it shoves on every action_required."""
    got: list[dict[str, Any]] = []
    ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
    async with connect(ws_url, additional_headers=player(settings, user)) as ws:
        refused_once = False
        async for raw in ws:
            message = json.loads(raw)
            got.append(message)
            if message["event"] == "end":
                break
            if message["event"] != "action_required":
                continue
            data = message["data"]
            if not refused_once:  # a stale turn first: a coded refusal, nothing changes
                refused_once = True
                await ws.send(
                    json.dumps(
                        {
                            "type": "act",
                            "requestId": "bad",
                            "handNumber": data["handNumber"],
                            "turn": data["turn"] + 7,
                            "action": "fold",
                        }
                    )
                )
            action = "all_in" if "all_in" in data["legalActions"]["actions"] else "call"
            await ws.send(
                json.dumps(
                    {
                        "type": "act",
                        "requestId": f"t{data['turn']}",
                        "handNumber": data["handNumber"],
                        "turn": data["turn"],
                        "action": action,
                    }
                )
            )
    return got


async def test_a_tournament_played_from_the_websocket_alone(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    tid = f"ws-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    users = [f"{tid}-0", f"{tid}-1"]
    streams = await asyncio.wait_for(
        asyncio.gather(*(_play_over_ws(api_url, settings, tid, u) for u in users)), 120
    )
    for user, got in zip(users, streams, strict=True):
        events = [m["event"] for m in got]
        assert "action_required" in events and "game_state" in events, events
        results = [m for m in got if m["event"] == "act_result"]
        assert results and all(m["requestId"].startswith("t") for m in results)
        errors = [m for m in got if m["event"] == "error"]
        assert [(e["requestId"], e["data"]["code"]) for e in errors] == [("bad", "stale_turn")]
        # The stream ends after the tournament's final event.
        finals = [m for m in got if m["event"] == "tournament_state_changed"]
        assert finals[-1]["data"]["state"] == "closed" and events[-1] == "end"
        # The bust reads as the seed orders it: eliminated, a fresh game state, the result.
        bust = events.index("player_eliminated")
        assert events[bust + 1] == "game_state" and events[bust + 2] == "hand_result", events
        last_state = [m for m in got if m["event"] == "game_state"][-1]["data"]
        assert last_state["you"]["playerId"] == user
        # Ids only move forward.
        logs = [int(m["id"].split("-")[0]) for m in got if "id" in m]
        assert logs == sorted(logs)
    places = sorted(
        [m for m in got if m["event"] == "game_state"][-1]["data"]["you"]["place"]
        for got in streams
    )
    assert places == [1, 2]


async def _sse(
    http: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    count: int,
    last: str | None = None,
    until: str | None = None,
) -> list[tuple[str, str, str]]:
    """Read ``count`` messages (id, event, data) of an SSE stream, or up to the first of type
    ``until``, then disconnect."""
    out: list[tuple[str, str, str]] = []
    extra = {"Last-Event-ID": last} if last else {}
    async with http.stream("GET", path, headers={**headers, **extra}) as r:
        assert r.status_code == 200
        fields: dict[str, str] = {}
        async for line in r.aiter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if "event" in fields:
                    out.append((fields.get("id", ""), fields["event"], fields.get("data", "")))
                    if len(out) >= count or fields["event"] == until:
                        return out
                fields = {}
                continue
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return out


async def test_the_sse_stream_resumes_without_losing_a_log_event(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    tid = f"sse-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    users = [f"{tid}-0", f"{tid}-1"]
    path = f"/tournaments/{tid}/me/stream"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        first = await _sse(http, path, player(settings, users[0]), 100, until="game_state")
        assert any(event == "game_state" for _, event, _ in first)
        # Play to the end over HTTP meanwhile, by the game state's legal actions.
        while True:
            states = [
                (
                    await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, u))
                ).json()
                for u in users
            ]
            if states[0]["tournament"]["state"] in ("ended", "settling", "closed"):
                break
            for u, st in zip(users, states, strict=True):
                if st.get("legalActions"):
                    actions = st["legalActions"]["actions"]
                    await http.post(
                        f"/tournaments/{tid}/act",
                        headers=player(settings, u),
                        json={
                            "handNumber": st["handNumber"],
                            "turn": st["turn"],
                            "action": "all_in" if "all_in" in actions else "call",
                        },
                    )
            await asyncio.sleep(0.05)

        async def closed() -> bool | None:
            r = await http.get(f"/tournaments/{tid}")
            return True if r.json()["state"] == "closed" else None

        await eventually(closed, limit=30)
        rest = await _sse(http, path, player(settings, users[0]), 10_000, last=first[-1][0])
        log = (await http.get(f"/tournaments/{tid}/events.json", params={"limit": 500})).json()
    resumed_after = int(first[-1][0].split("-")[0])
    streamed = [
        (int(id_.split("-")[0]), event)
        for id_, event, _ in first + rest
        if event not in ("game_state", "action_required")
    ]
    expected = [(e["id"], e["type"]) for e in log["events"]]
    # Every log event exactly once across the two connections, in order.
    assert [s for s in streamed if s[0] <= resumed_after] + [
        s for s in streamed if s[0] > resumed_after
    ] == expected
    assert rest[-1][1] == "tournament_state_changed"


async def _room_agent(
    url: str, settings: Settings, room_id: str, user: str, hands: int, done: asyncio.Event
) -> list[dict[str, Any]]:
    """A room player with only the socket: calls or checks until ``hands`` hands have been
    dealt, then keeps reading until the room closes."""
    got: list[dict[str, Any]] = []
    ws_url = url.replace("http://", "ws://") + f"/rooms/{room_id}/me/ws"
    async with connect(ws_url, additional_headers=player(settings, user)) as ws:
        async for raw in ws:
            message = json.loads(raw)
            got.append(message)
            if message["event"] == "end":
                break
            if message["event"] == "game_state" and message["data"]["handNumber"] > hands:
                done.set()
            if message["event"] != "action_required":
                continue
            data = message["data"]
            action = "check" if "check" in data["legalActions"]["actions"] else "call"
            await ws.send(
                json.dumps(
                    {
                        "type": "act",
                        "handNumber": data["handNumber"],
                        "turn": data["turn"],
                        "action": action,
                    }
                )
            )
    return got


async def test_a_cash_room_played_from_the_websocket_alone(
    settings: Settings, api_url: str, worker: Worker
) -> None:
    from tests.integration.helpers import admin, credit
    from tests.integration.test_rooms import open_room

    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2)
        users = [f"wsr-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
        for user in users:
            await credit(http, settings, user, 5000)
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, user))
            assert r.status_code == 200, r.text
        done = asyncio.Event()
        agents = [
            asyncio.create_task(_room_agent(api_url, settings, room_id, u, 3, done)) for u in users
        ]
        await asyncio.wait_for(done.wait(), 90)
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        assert r.status_code == 200, r.text
        streams = await asyncio.wait_for(asyncio.gather(*agents), 60)
    for got in streams:
        events = [m["event"] for m in got]
        assert "action_required" in events and "act_result" in events, events
        assert "hand_start" in events and "hand_result" in events  # the room's own stream
        assert events[-2:] == ["room_status", "end"], events[-5:]
        assert got[-2]["data"]["status"] == "closed"
        # Each hand's result comes right after a fresh game state.
        for i, event in enumerate(events):
            if event == "hand_result":
                assert events[i - 1] == "game_state", events[i - 3 : i + 1]


async def test_a_socket_without_a_credential_or_a_table_is_closed_with_a_code(
    settings: Settings, api_url: str
) -> None:
    from websockets.exceptions import ConnectionClosed

    base = api_url.replace("http://", "ws://")

    async def close_code(path: str, headers: dict[str, str]) -> int | None:
        async with connect(base + path, additional_headers=headers) as ws:
            try:
                await ws.recv()
            except ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None
        return None

    assert await close_code("/tournaments/nope/me/ws", {}) == 4401
    assert await close_code("/tournaments/nope/me/ws", player(settings, "someone")) == 4404
    assert await close_code("/rooms/bad%20id/me/ws", player(settings, "someone")) == 4404


async def test_socket_messages_count_against_the_rate_limits(
    client: Client, db: Database, task_queue: str, settings: Settings, worker: Worker
) -> None:
    """Security: each message on the socket is a request (an act is an Update on the
    table), so the per-credential limit applies to it as to ``POST …/act``."""
    from tests.conftest import serve_api

    tid = f"rl-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    limited = settings.model_copy(update={"rate_limit_credential": "4/second"})
    async with serve_api(limited) as url:
        ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
        async with connect(ws_url, additional_headers=player(settings, f"{tid}-0")) as ws:
            for _ in range(12):
                await ws.send("{}")
            codes: list[str] = []
            while len(codes) < 12:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["event"] == "error":
                    codes.append(message["data"]["code"])
    assert "rate_limited" in codes and "validation_error" in codes, codes
    assert codes.count("validation_error") <= 4, codes  # the handshake took one of the four


async def _stream_record(db: Database, table_id: str, user: str) -> tuple[bool, bool]:
    """(a record exists, it says dropped) for the player's stream at the table."""
    async with db.engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT dropped_at IS NOT NULL FROM stream_presence"
                    " WHERE table_id = :t AND player_id = :p"
                ),
                {"t": table_id, "p": user},
            )
        ).first()
    return (row is not None, bool(row[0])) if row is not None else (False, False)


async def _until(ws: Any, event: str) -> dict[str, Any]:
    async for raw in ws:
        message: dict[str, Any] = json.loads(raw)
        if message["event"] == event:
            return message
    raise AssertionError(f"the socket closed before {event}")


async def test_a_dropped_socket_gets_the_disconnect_grace_and_acts_after_reconnecting(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    """Seed 004's disconnect grace end to end (issue 28): the player to act drops its
    WebSocket; the API records the drop, the table holds the decision past the decision time
    (10 s) for the grace (30 s from the drop), the reconnected player is told it is still its
    turn, with the grace in its seat, and its action counts."""
    tid = f"grace-{uuid.uuid4().hex[:8]}"
    cfg = {**SETTINGS, "actionTimeoutSeconds": 10, "disconnectGrace": 30}
    await start_paid_tournament(client, db, task_queue, tid, cfg, hand_pause_ms=0)
    table_id = table_workflow_id(tid)
    users = [f"{tid}-0", f"{tid}-1"]
    ws_url = api_url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:

        async def someone_to_act() -> tuple[str, int, int] | None:
            for user in users:
                r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, user))
                body = r.json() if r.status_code == 200 else {}
                if (body.get("you") or {}).get("toAct"):
                    return user, body["handNumber"], body["turn"]
            return None

        actor, hand_no, turn = await eventually(someone_to_act, limit=60)

    async with connect(ws_url, additional_headers=player(settings, actor)) as ws:
        asked = (await asyncio.wait_for(_until(ws, "action_required"), 30))["data"]
        assert (asked["handNumber"], asked["turn"]) == (hand_no, turn)

        async def seen_open() -> bool:
            return await _stream_record(db, table_id, actor) == (True, False)

        await eventually(seen_open)

    async def seen_dropped() -> bool:
        return await _stream_record(db, table_id, actor) == (True, True)

    await eventually(seen_dropped)
    await asyncio.sleep(11)  # the decision time is over; the grace is not

    async with connect(ws_url, additional_headers=player(settings, actor)) as ws:
        while True:  # the state that shows the held decision (the timer fired by now)
            state = (await asyncio.wait_for(_until(ws, "game_state"), 30))["data"]
            assert (state["handNumber"], state["turn"]) == (hand_no, turn)
            mine = next(s for s in state["seats"] if s["playerId"] == actor)
            assert mine["timeouts"] == 0
            if mine["graceUntil"] is not None:
                break
        assert mine["graceUntil"] == state["deadline"] and mine["disconnectedAt"] is not None
        assert 29_000 <= mine["graceUntil"] - mine["disconnectedAt"] <= 30_000
        assert state["you"]["toAct"]  # still the player's turn (``action_required`` said so)
        action = "call" if "call" in state["legalActions"]["actions"] else "check"
        await ws.send(
            json.dumps({"type": "act", "handNumber": hand_no, "turn": turn, "action": action})
        )
        # Accepted (a refused one is an ``error``): the hand moved on from the player's turn.
        result = (await asyncio.wait_for(_until(ws, "act_result"), 30))["data"]
        assert result["ok"] and (result["handNumber"], result["turn"]) == (hand_no, turn + 1)

        async def reconnected() -> bool:
            return await _stream_record(db, table_id, actor) == (True, False)

        await eventually(reconnected)


async def test_a_room_players_sse_stream_records_its_drop_and_its_return(
    settings: Settings, api_url: str, worker: Worker, db: Database
) -> None:
    """The SSE stream tells the table the same way (issue 28): its end is a drop, its return
    ends the drop; a spectator's stream records nothing."""
    from tests.integration.helpers import credit
    from tests.integration.test_rooms import open_room, workflow_id

    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2)
        user, watcher = (f"sse-{n}-{uuid.uuid4().hex[:6]}" for n in "ab")
        await credit(http, settings, user, 5000)
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, user))
        assert r.status_code == 200, r.text
        path = f"/rooms/{room_id}/me/stream"
        got = await _sse(http, path, player(settings, user), 100, until="game_state")
        assert got[-1][1] == "game_state"

        async def dropped() -> bool:
            return await _stream_record(db, workflow_id(room_id), user) == (True, True)

        await eventually(dropped)

        async def back() -> bool:
            return await _stream_record(db, workflow_id(room_id), user) == (True, False)

        async with http.stream("GET", path, headers=player(settings, user)) as r:
            assert r.status_code == 200
            await eventually(back)
        await eventually(dropped)
        await _sse(http, path, player(settings, watcher), 100, until="game_state")
        assert await _stream_record(db, workflow_id(room_id), watcher) == (False, False)


async def test_a_rate_limited_message_is_named_in_its_refusal(
    client: Client, db: Database, task_queue: str, settings: Settings, worker: Worker
) -> None:
    """A message dropped by the rate limit is answered with a ``rate_limited`` error that
    says which message it was: its ``requestId`` (echoed as every answer echoes it) and, in
    ``dropped``, its ``type``, its ``requestId`` and its ordinal on the socket, so a client
    that sent several (with or without ids) knows which to send again."""
    from tests.conftest import serve_api

    tid = f"rl-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)
    limited = settings.model_copy(update={"rate_limit_credential": "4/second"})
    sent = [{"type": "seed", "requestId": f"r{n}"} for n in range(12)]
    async with serve_api(limited) as url:
        ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
        async with connect(ws_url, additional_headers=player(settings, f"{tid}-0")) as ws:
            for message in sent:
                await ws.send(json.dumps(message))
            await ws.send("not json")  # the 13th: dropped too, with no type or id to name
            answers: list[dict[str, Any]] = []
            while len(answers) < 13:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["event"] == "error":
                    answers.append(message)
    limited_answers = [a for a in answers if a["data"]["code"] == "rate_limited"]
    assert limited_answers, answers
    for answer in limited_answers:
        dropped = answer["data"]["dropped"]
        if dropped["index"] == 13:
            assert dropped == {"index": 13, "type": None} and "requestId" not in answer
            continue
        assert dropped == {
            "index": dropped["index"],
            "type": "seed",
            "requestId": answer["requestId"],
        }
        assert answer["requestId"] == f"r{dropped['index'] - 1}", answer
        assert answer["data"]["retryAfterSeconds"] >= 1, answer
    # Every message got exactly one answer: the route's (a seed without its fields is a
    # validation_error) or the limit's, which names it.
    named = sorted(a["requestId"] for a in answers if "requestId" in a)
    assert named == sorted(m["requestId"] for m in sent), answers


async def test_a_turn_within_a_hand_is_sent_before_the_log_is_read(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30: a newer state of the running hand the stream last sent goes out before the
    stream reads the log (nothing the log can hold is due before it), so the turn does not
    wait for that read. Here every read of the log after the stream's first state is held:
    the opponent's call still brings the waiting player's ``action_required``."""
    tid = f"sse-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(
        client, db, task_queue, tid, heads_up(action_timeout_seconds=300), hand_pause_ms=0
    )
    users = [f"{tid}-0", f"{tid}-1"]
    # No idle tick: the stream reads the log only after a change.
    monkeypatch.setattr(player_stream, "POLL_SECONDS", 120.0)
    held = asyncio.Event()
    armed = False
    real = player_stream.read_page

    async def held_read(*args: Any) -> Any:
        if armed:
            await held.wait()
        return await real(*args)

    monkeypatch.setattr(player_stream, "read_page", held_read)
    got: asyncio.Queue[str] = asyncio.Queue()
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:

        async def turn() -> tuple[int, dict[str, Any]] | None:
            for i, user in enumerate(users):
                r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, user))
                if r.status_code == 200 and r.json().get("legalActions"):
                    return i, r.json()
            return None

        mover, body = await eventually(turn, limit=60)

        async def listen() -> None:
            path = f"/tournaments/{tid}/me/stream"
            async with http.stream("GET", path, headers=player(settings, users[1 - mover])) as r:
                async for line in r.aiter_lines():
                    if line.startswith("event:"):
                        got.put_nowait(line.partition(":")[2].strip())

        listener = asyncio.create_task(listen())
        try:
            while await asyncio.wait_for(got.get(), 30) != "game_state":
                pass
            armed = True  # the stream's next read of the log waits until the end
            actions = body["legalActions"]["actions"]
            r = await http.post(
                f"/tournaments/{tid}/act",
                headers=player(settings, users[mover]),
                json={
                    "handNumber": body["handNumber"],
                    "turn": body["turn"],
                    "action": "call" if "call" in actions else "check",
                },
            )
            assert r.status_code == 200, r.text
            seen = [await asyncio.wait_for(got.get(), 10) for _ in range(2)]
            assert seen == ["game_state", "action_required"], seen
        finally:
            held.set()
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        await client.get_workflow_handle(f"tournament-{tid}").terminate("test over")
        await client.get_workflow_handle(table_workflow_id(tid)).terminate("test over")
