"""CoPilot (issue 29, docs/copilot.md): an advisor agent advises a player of a copilot
tournament over its own socket, the player's stream carries the advice, and the advisor can
never act for the player nor delay the player's clock.

The players here are bots playing through their own per-player WebSocket, as a person's page
does; the advisor is the bundled one (``sdk/advisor.py``) over the real socket, or a raw socket
where a test needs a slow or wrong advisor.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from datetime import timedelta
from typing import Any

import httpx
from nacl.public import PrivateKey, SealedBox
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from core.settings import Settings
from db import ledger
from db.engine import Database
from sdk.advisor import run_advisor
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import eventually, player
from tests.integration.test_ws_schema import _protocol
from wire.ids import table_workflow_id
from wire.messages import CreateTournamentInput, PayEntryInput, RegisterInput
from workflows.tournament import TournamentWorkflow

SETTINGS: dict[str, Any] = {
    "kind": "copilot",
    "seats": 2,
    "entryFee": 10,
    "startingStack": 1000,
    "actionTimeoutSeconds": 300,
    "blindStructure": {
        "startingSmallBlind": 10,
        "increaseFactor": 1.5,
        "levelDurationSeconds": 600,
    },
}


async def start_copilot_tournament(
    client: Client,
    db: Database,
    task_queue: str,
    http: httpx.AsyncClient,
    settings: Settings,
    tid: str,
    cfg: dict[str, Any],
) -> list[tuple[str, dict[str, Any]]]:
    """A copilot tournament whose every seat is a person with an advisor agent of their own,
    registered and paid: [(player, their advisor agent)]."""
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings=cfg, hand_pause_ms=0),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    seated = []
    for i in range(int(cfg["seats"])):
        user = f"{tid}-{i}"
        agent = await new_agent(http, settings, user)
        await ledger.transfer(
            db,
            key=f"seed-{user}",
            source=ledger.MINT,
            destination=ledger.user_account(user),
            amount=int(cfg["entryFee"]),
        )
        await handle.execute_update(
            TournamentWorkflow.register,
            RegisterInput(
                player_id=user,
                owner_user_id=user,
                advisor_agent_id=agent["agentId"],
                advisor_owner_user_id=user,
                advisor_skills=list(agent["skills"]),
            ),
        )
        await handle.execute_update(
            TournamentWorkflow.pay_entry,
            PayEntryInput(player_id=user, amount=int(cfg["entryFee"])),
        )
        seated.append((user, agent))
    return seated


def _ws(url: str, path: str) -> str:
    return url.replace("http://", "ws://") + path


def _act(data: dict[str, Any]) -> str:
    actions = data["legalActions"]["actions"]
    action = "all_in" if "all_in" in actions else "call" if "call" in actions else "check"
    return json.dumps(
        {"type": "act", "handNumber": data["handNumber"], "turn": data["turn"], "action": action}
    )


async def _play(
    url: str, settings: Settings, tid: str, user: str, *, wait_for_advice: bool
) -> list[dict[str, Any]]:
    """A person at the table through their own socket: shoves on each turn; with
    ``wait_for_advice``, only once that turn's advice has arrived (so it must arrive)."""
    got: list[dict[str, Any]] = []
    async with connect(
        _ws(url, f"/tournaments/{tid}/me/ws"), additional_headers=player(settings, user)
    ) as ws:
        pending: dict[str, Any] | None = None
        async for raw in ws:
            message = json.loads(raw)
            got.append(message)
            event, data = message["event"], message.get("data")
            if event == "end":
                break
            if event == "action_required":
                if wait_for_advice:
                    pending = data
                else:
                    await ws.send(_act(data))
            elif event == "advice" and pending is not None:
                assert (data["handNumber"], data["turn"]) == (
                    pending["handNumber"],
                    pending["turn"],
                ), (data, pending)
                await ws.send(_act(pending))
                pending = None
    return got


def _turns(frames: list[dict[str, Any]], event: str) -> list[tuple[int, int]]:
    return [(m["data"]["handNumber"], m["data"]["turn"]) for m in frames if m["event"] == event]


async def test_the_bundled_advisor_advises_each_turn_and_sees_only_its_players_cards(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    tid = f"cp-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        (alice, advisor), (bob, _absent) = await start_copilot_tournament(
            client, db, task_queue, http, settings, tid, SETTINGS
        )
    frames: list[dict[str, Any]] = []
    advising = asyncio.create_task(run_advisor(api_url, advisor["key"], tid, log=frames))
    streams = await asyncio.wait_for(
        asyncio.gather(
            _play(api_url, settings, tid, alice, wait_for_advice=True),
            _play(api_url, settings, tid, bob, wait_for_advice=False),
        ),
        120,
    )
    await asyncio.wait_for(advising, 30)  # the advisor's socket ends with the tournament
    mine, theirs = streams
    asked = _turns(mine, "action_required")
    assert asked, [m["event"] for m in mine]
    # Each of Alice's turns got its advice, once, right behind its action_required (at most
    # a game state between), from her own advisor.
    assert _turns(mine, "advice") == asked
    # ... each after its own action_required and before the next one.
    order = [
        (m["event"], m["data"]["handNumber"], m["data"]["turn"])
        for m in mine
        if m["event"] in ("action_required", "advice")
    ]
    assert order == [(e, h, t) for h, t in asked for e in ("action_required", "advice")], order
    for m in mine:
        if m["event"] == "advice":
            assert m["data"]["advisorAgentId"] == advisor["agentId"]
            assert m["data"]["action"] in ("fold", "check", "call", "raise", "all_in")
            assert 0 < len(m["data"]["reason"]) <= 280
    # Bob's advisor never connected: his stream has no advice, and he played anyway.
    assert "advice" not in [m["event"] for m in theirs]
    assert _turns(theirs, "action_required")

    requests = [m["data"] for m in frames if m.get("event") == "advice_request"]
    assert [(r["handNumber"], r["turn"]) for r in requests] == asked
    for request in requests:
        assert request["playerId"] == alice
        state = request["gameState"]
        assert state["you"]["playerId"] == alice and state["you"]["toAct"]
        assert state["deadline"] == request["deadline"]
        assert "mRatio" in state["tournamentMyView"]  # the tournament view comes with it
        seats = {s["seat"]: s["playerId"] for s in state["seats"]}
        for seat in state["hand"]["players"]:
            if seats[seat["seat"]] == alice:
                assert seat["holeCards"] and len(seat["holeCards"]) == 2
            else:
                assert seat["holeCards"] is None, state["hand"]  # never another's cards
    results = [m for m in frames if m.get("event") in ("advice_result", "error")]
    assert [m["event"] for m in results] == ["advice_result"] * len(requests), results
    assert frames[-1] == {"event": "end"}

    # Every frame either way is one the AsyncAPI document describes (GET /asyncapi.json).
    protocol = await _protocol(api_url)
    for frame in frames:
        if "sent" in frame:
            assert protocol.accepts("tournamentAdvisor", frame["sent"]), frame
        else:
            protocol.check_sent("tournamentAdvisor", frame)
    for frame in mine + theirs:
        protocol.check_sent("tournamentPlayer", frame)


async def _next(ws: ClientConnection, event: str, limit: float = 30) -> dict[str, Any]:
    async def find() -> dict[str, Any]:
        async for raw in ws:
            message: dict[str, Any] = json.loads(raw)
            if message.get("event") == event:
                return message
        raise AssertionError(f"the socket closed before {event}")

    return await asyncio.wait_for(find(), limit)


async def test_advice_is_checked_and_coded_and_the_advisor_cannot_act(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    tid = f"cpr-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        seated = await start_copilot_tournament(
            client, db, task_queue, http, settings, tid, SETTINGS
        )
        advisors = dict(seated)

        async def to_act() -> tuple[str, dict[str, Any]] | None:
            for user, _ in seated:
                r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, user))
                body = r.json() if r.status_code == 200 else {}
                if (body.get("you") or {}).get("toAct"):
                    return user, body
            return None

        actor, state = await eventually(to_act, limit=60)
        other = next(u for u, _ in seated if u != actor)
        key = advisors[actor]["key"]
        hand, turn, legal = state["handNumber"], state["turn"], state["legalActions"]
        base = {"type": "advice", "handNumber": hand, "turn": turn, "reason": "because"}

        async with connect(
            _ws(api_url, f"/tournaments/{tid}/advisor/ws"), additional_headers=agent_headers(key)
        ) as ws:
            request = (await _next(ws, "advice_request"))["data"]
            assert (request["playerId"], request["handNumber"], request["turn"]) == (
                actor,
                hand,
                turn,
            )
            assert request["requestId"]
            refused = {
                "act": ({"type": "act", "handNumber": hand, "turn": turn, "action": "fold"}),
                # (a requestId of the advisor's own, shaped like ours, names no player)
                "my-stale-turn": {**base, "turn": turn + 5, "action": "fold"},
                "illegal": {
                    **base,
                    "action": "check" if "check" not in legal["actions"] else "call",
                },
                "range": {**base, "action": "raise", "amount": legal["maxRaiseTo"] + 1},
                "reason": {**base, "action": "fold", "reason": "x" * 281},
                "amount": {**base, "action": "fold", "amount": 5},
                "other": {**base, "action": "fold", "playerId": other},
            }
            codes: dict[str, tuple[str, str | None]] = {}
            for name, message in refused.items():
                await ws.send(json.dumps({**message, "requestId": name}))
                answer = await _next(ws, "error")
                assert answer["requestId"] == name
                codes[name] = (answer["data"]["code"], answer["data"].get("field"))
            assert codes == {
                "act": ("advisor_cannot_act", "type"),
                "my-stale-turn": ("stale_turn", "turn"),
                "illegal": ("illegal_action", "action"),
                "range": ("amount_out_of_range", "amount"),
                "reason": ("validation_error", "reason"),
                "amount": ("validation_error", "amount"),
                "other": ("not_an_advisor", "playerId"),
            }, codes
            # The advisor's key cannot act for the player on HTTP, nor on a player socket.
            r = await http.post(
                f"/tournaments/{tid}/act",
                headers=agent_headers(key),
                json={"handNumber": hand, "turn": turn, "action": "fold"},
            )
            # The table knows only the player's seat: the agent has none (refused by the act
            # Update's validator, so not even the table's history hears of it).
            assert (r.status_code, r.json()["code"]) == (409, "unknown_seat"), r.text
            http_code = r.json()["code"]
            async with connect(
                _ws(api_url, f"/tournaments/{tid}/me/ws"), additional_headers=agent_headers(key)
            ) as own:
                await own.send(
                    json.dumps({"type": "act", "handNumber": hand, "turn": turn, "action": "fold"})
                )
                assert (await _next(own, "error"))["data"]["code"] == http_code
            r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, actor))
            after = r.json()
            assert (after["handNumber"], after["turn"], after["you"]["toAct"]) == (
                hand,
                turn,
                True,
            ), "a refused advice or act changed the table"

            # A good advice: accepted, the first one stands, the player's stream shows it.
            good = {**base, "action": "fold", "requestId": request["requestId"]}
            await ws.send(json.dumps(good))
            result = await _next(ws, "advice_result")
            assert result["requestId"] == request["requestId"]
            assert result["data"] == {
                "ok": True,
                "playerId": actor,
                "handNumber": hand,
                "turn": turn,
            }
            await ws.send(json.dumps({**good, "action": legal["actions"][-1]}))
            assert (await _next(ws, "error"))["data"]["code"] == "advice_already_given"

            async with connect(
                _ws(api_url, f"/tournaments/{tid}/me/ws"),
                additional_headers=player(settings, actor),
            ) as mine:
                required = (await _next(mine, "action_required"))["data"]
                shown = (await _next(mine, "advice"))["data"]
            assert (required["handNumber"], required["turn"]) == (hand, turn)
            assert shown == {
                "handNumber": hand,
                "turn": turn,
                "action": "fold",
                "amount": None,
                "reason": "because",
                "advisorAgentId": advisors[actor]["agentId"],
            }
            # An advisor with a key on its Agent Card gets the player's cards sealed to it,
            # never in clear (as an agent's own cards).
            private = PrivateKey.generate()
            r = await http.put(
                "/me/agent-card",
                json={"publicKey": base64.b64encode(bytes(private.public_key)).decode()},
                headers=agent_headers(key),
            )
            assert r.status_code == 200, r.text
            async with connect(
                _ws(api_url, f"/tournaments/{tid}/advisor/ws"),
                additional_headers=agent_headers(key),
            ) as again:
                sealed_request = (await _next(again, "advice_request"))["data"]
            assert (sealed_request["handNumber"], sealed_request["turn"]) == (hand, turn)
            seats = {s["seat"]: s["playerId"] for s in sealed_request["gameState"]["seats"]}
            [theirs_sealed] = [
                p
                for p in sealed_request["gameState"]["hand"]["players"]
                if seats[p["seat"]] == actor
            ]
            assert theirs_sealed["holeCards"] is None
            opened = SealedBox(private).decrypt(base64.b64decode(theirs_sealed["sealedHoleCards"]))
            mine_in_clear = next(
                p["holeCards"]
                for p in after["hand"]["players"]
                if p["seat"] == after["you"]["seat"]
            )
            assert json.loads(opened) == mine_in_clear

            # The other player's stream never gets it.
            async with connect(
                _ws(api_url, f"/tournaments/{tid}/me/ws"),
                additional_headers=player(settings, other),
            ) as theirs:
                await _next(theirs, "game_state")
                with_advice = asyncio.create_task(_next(theirs, "advice", limit=2))
                try:
                    await with_advice
                    raise AssertionError("another player's stream carried the advice")
                except TimeoutError:
                    pass


async def test_advisor_socket_handshake_refusals_are_coded(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        stranger = await new_agent(http, settings, "cp-stranger")
        tid = f"cph-{uuid.uuid4().hex[:8]}"
        await client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(tournament_id=tid, name=tid, settings=SETTINGS),
            id=f"tournament-{tid}",
            task_queue=task_queue,
        )

        async def exists() -> bool:
            return (await http.get(f"/tournaments/{tid}")).status_code == 200

        await eventually(exists)

    async def close(path: str, headers: dict[str, str]) -> tuple[int | None, str]:
        async with connect(_ws(api_url, path), additional_headers=headers) as ws:
            try:
                await ws.recv()
            except ConnectionClosed as closed:
                return (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, "")
        return None, ""

    path = f"/tournaments/{tid}/advisor/ws"
    assert (await close(path, {}))[0] == 4401
    code, reason = await close(path, player(settings, "cp-someone"))
    assert (code, reason.split(":")[0]) == (4403, "forbidden")
    code, reason = await close(path, agent_headers(stranger["key"]))
    assert (code, reason.split(":")[0]) == (4403, "not_an_advisor")
    code, _ = await close("/tournaments/nope/advisor/ws", agent_headers(stranger["key"]))
    assert code == 4404


async def test_a_slow_or_absent_advisor_never_delays_the_players_clock(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    """Nobody acts: one player's advisor answers only once the turn is over, the other's never
    connects. Each player's decision timer is the settings' (3 s) and fires; the table's
    history holds no Update or signal from the advisory path; the late advice is refused
    ``stale_turn`` and never reaches the player."""
    timeout = 3
    cfg = {**SETTINGS, "actionTimeoutSeconds": timeout}
    tid = f"cpc-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        (first, slow), (second, _absent) = await start_copilot_tournament(
            client, db, task_queue, http, settings, tid, cfg
        )
    timed_out: dict[str, int] = {}
    first_timed_out = asyncio.Event()
    frames: dict[str, list[dict[str, Any]]] = {first: [], second: []}

    async def sit_still(user: str) -> None:
        """A player whose stream is open and who never acts: until their first timeout."""
        async with connect(
            _ws(api_url, f"/tournaments/{tid}/me/ws"), additional_headers=player(settings, user)
        ) as ws:
            async for raw in ws:
                message = json.loads(raw)
                frames[user].append(message)
                if message["event"] != "game_state":
                    continue
                data = message["data"]
                mine = next((s for s in data["seats"] if s["playerId"] == user), None)
                if mine is not None and mine["timeouts"] >= 1:  # the table acted for them
                    timed_out[user] = data["handNumber"]
                    if user == first:
                        first_timed_out.set()
                    return

    async def late_advisor() -> dict[str, Any]:
        async with connect(
            _ws(api_url, f"/tournaments/{tid}/advisor/ws"),
            additional_headers=agent_headers(slow["key"]),
        ) as ws:
            request = (await _next(ws, "advice_request"))["data"]
            await first_timed_out.wait()  # answers only after the player's clock ran out
            await ws.send(
                json.dumps(
                    {
                        "type": "advice",
                        "requestId": request["requestId"],
                        "handNumber": request["handNumber"],
                        "turn": request["turn"],
                        "action": "fold",
                        "reason": "too late",
                    }
                )
            )
            answer = await _next(ws, "error")
            return {"request": request, "answer": answer}

    late = asyncio.create_task(late_advisor())
    await asyncio.wait_for(asyncio.gather(sit_still(first), sit_still(second)), 60)
    got = await asyncio.wait_for(late, 30)
    assert got["answer"]["data"]["code"] == "stale_turn"
    assert got["answer"]["requestId"] == got["request"]["requestId"]
    for user in (first, second):
        assert "advice" not in [m["event"] for m in frames[user]]
        required = [m["data"] for m in frames[user] if m["event"] == "action_required"]
        assert required and required[0]["deadline"] is not None
    # The advisor saw the same deadline the player was given.
    firsts = [m["data"] for m in frames[first] if m["event"] == "action_required"]
    assert got["request"]["deadline"] == firsts[0]["deadline"]

    history = await client.get_workflow_handle(table_workflow_id(tid)).fetch_history()
    started: dict[int, timedelta] = {}
    fired: set[int] = set()
    kinds: set[int] = set()
    for event in history.events:
        kinds.add(event.event_type)
        if event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
            attrs = event.timer_started_event_attributes
            started[event.event_id] = attrs.start_to_fire_timeout.ToTimedelta()
        elif event.event_type == EventType.EVENT_TYPE_TIMER_FIRED:
            fired.add(event.timer_fired_event_attributes.started_event_id)
    decisions = [i for i, d in started.items() if d == timedelta(seconds=timeout)]
    # Both players' first decisions ran the settings' full timer, which fired (nobody acted).
    assert len([i for i in decisions if i in fired]) >= 2, started
    # Nothing reached the table but its own timers: no Update, no signal from the advisor.
    assert EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED not in kinds
    assert EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED not in kinds


async def _room_player(
    url: str,
    settings: Settings,
    room_id: str,
    user: str,
    hands: int,
    done: asyncio.Event,
    *,
    wait_for_advice: bool,
) -> list[dict[str, Any]]:
    """A person in a cash room through their own socket: calls or checks (with
    ``wait_for_advice``, once the turn's advice came) until the room closes."""
    got: list[dict[str, Any]] = []
    async with connect(
        _ws(url, f"/rooms/{room_id}/me/ws"), additional_headers=player(settings, user)
    ) as ws:
        pending: dict[str, Any] | None = None
        async for raw in ws:
            message = json.loads(raw)
            got.append(message)
            event, data = message["event"], message.get("data")
            if event == "end":
                break
            if event == "game_state" and data["handNumber"] > hands:
                done.set()
            if event == "action_required":
                if wait_for_advice:
                    pending = data
                    continue
            elif not (event == "advice" and pending is not None):
                continue
            else:
                data, pending = pending, None
            actions = data["legalActions"]["actions"]
            action = "check" if "check" in actions else "call"
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


async def test_a_copilot_room_binds_the_advisor_at_the_join_and_advises_each_turn(
    settings: Settings, api_url: str, worker: Worker
) -> None:
    from tests.integration.helpers import admin, credit
    from tests.integration.test_rooms import open_room

    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2, kind="copilot")
        plain = await open_room(http, settings, seats=2)
        alice, bob = (f"cpr-{n}-{uuid.uuid4().hex[:6]}" for n in "ab")
        advisors = {u: await new_agent(http, settings, u) for u in (alice, bob)}
        unskilled = await new_agent(http, settings, alice, skills=["poker:cash-nlhe"])
        for user in (alice, bob):
            await credit(http, settings, user, 5000)

        async def join(room: str, user: str, advisor: str | None) -> httpx.Response:
            body = {} if advisor is None else {"advisorAgentId": advisor}
            return await http.post(f"/rooms/{room}/join", json=body, headers=player(settings, user))

        def coded(r: httpx.Response) -> tuple[int, str, str | None]:
            return r.status_code, r.json().get("code"), r.json().get("field")

        refused = "advisor_required", "advisorAgentId"
        assert coded(await join(room_id, alice, None)) == (409, *refused)
        assert coded(await join(room_id, alice, advisors[bob]["agentId"])) == (409, *refused)
        assert coded(await join(room_id, alice, unskilled["agentId"])) == (409, *refused)
        assert coded(await join(room_id, alice, "agent-nope")) == (409, *refused)
        assert coded(await join(plain, alice, advisors[alice]["agentId"])) == (
            409,
            "advisor_on_non_copilot_kind",
            "advisorAgentId",
        )
        # An agent at a copilot room meets the audience gate first, as at a tournament.
        r = await http.post(
            f"/rooms/{room_id}/join", json={}, headers=agent_headers(advisors[bob]["key"])
        )
        assert coded(r)[:2] == (409, "agent_not_allowed_at_human_table")
        # The refused joins changed nothing: nobody sits, no balance moved.
        assert (await http.get(f"/rooms/{room_id}")).json()["players"] == []
        for user in (alice, bob):
            r = await join(room_id, user, advisors[user]["agentId"])
            assert r.status_code == 200, r.text

        frames: list[dict[str, Any]] = []
        advising = asyncio.create_task(
            run_advisor(api_url, advisors[alice]["key"], room_id=room_id, log=frames)
        )
        done = asyncio.Event()
        players = [
            asyncio.create_task(
                _room_player(api_url, settings, room_id, u, 3, done, wait_for_advice=(u == alice))
            )
            for u in (alice, bob)
        ]
        await asyncio.wait_for(done.wait(), 90)
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(settings))
        assert r.status_code == 200, r.text
        mine, theirs = await asyncio.wait_for(asyncio.gather(*players), 60)
        await asyncio.wait_for(advising, 30)  # the advisor's socket ends with the room
    asked = _turns(mine, "action_required")
    advised = _turns(mine, "advice")
    assert len(asked) >= 3, asked
    # Every turn she acted on had its advice (the room may close on her last one).
    assert advised == asked or advised == asked[:-1], (asked, advised)
    assert "advice" not in [m["event"] for m in theirs]
    requests = [m["data"] for m in frames if m.get("event") == "advice_request"]
    assert [(r["handNumber"], r["turn"]) for r in requests][: len(advised)] == advised
    for request in requests:
        state = request["gameState"]
        assert request["playerId"] == alice and state["roomId"] == room_id
        seats = {s["seat"]: s["playerId"] for s in state["seats"]}
        for seat in state["hand"]["players"]:
            if seats[seat["seat"]] != alice:
                assert seat["holeCards"] is None, state["hand"]
    assert frames[-1] == {"event": "end"}
    protocol = await _protocol(api_url)
    for frame in frames:
        if "sent" in frame:
            assert protocol.accepts("roomAdvisor", frame["sent"]), frame
        else:
            protocol.check_sent("roomAdvisor", frame)
    for frame in mine:
        protocol.check_sent("roomPlayer", frame)
