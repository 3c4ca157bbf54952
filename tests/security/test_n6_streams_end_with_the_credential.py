"""N6 (security review 2026-12-03): open streams outlived the credential that opened them.

``player_messages`` resolved the viewer once, at connect, and never checked the credential
again: a revoked agent's socket kept receiving its hole cards for the next hands while HTTP
already answered 401, and a stolen player token's stream never ended at its ``exp``. Now a
stream checks its credential again before each message that carries private data and at
least every ``RECHECK_SECONDS`` while idle, and ends when it no longer holds: a WebSocket
closes with 4401, an SSE stream ends after an ``error`` event ``unauthorized``.

Each test opens both kinds of stream, lets them show the player's hole cards, then ends the
credential at a moment the table cannot move on by itself (it is the victim's turn, or
nobody acts), and only afterwards lets play go on: no later hand's cards may arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, credit, eventually, player, start_paid_tournament


@dataclass
class Seen:
    """What one stream delivered: (event, data) in order, and how it ended."""

    messages: list[tuple[str, Any]] = field(default_factory=list)
    ended: bool = False
    close_code: int | None = None

    def hands_with_cards(self, me: str) -> list[int]:
        """The hand numbers of the game states that showed ``me`` its own hole cards."""
        hands = []
        for event, data in self.messages:
            if event != "game_state" or not data.get("hand"):
                continue
            seat = next((s["seat"] for s in data["seats"] if s["playerId"] == me), None)
            mine = next((p for p in data["hand"]["players"] if p["seat"] == seat), None)
            if mine and (mine.get("holeCards") or mine.get("sealedHoleCards")):
                hands.append(int(data["handNumber"]))
        return hands


async def _read_sse(url: str, path: str, headers: dict[str, str], seen: Seen) -> None:
    async with (
        httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30, read=None)) as http,
        http.stream("GET", path, headers=headers) as r,
    ):
        assert r.status_code == 200, await r.aread()
        fields: dict[str, str] = {}
        async for line in r.aiter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if "event" in fields:
                    seen.messages.append(
                        (fields["event"], json.loads(fields.get("data") or "null"))
                    )
                fields = {}
                continue
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    seen.ended = True


async def _read_ws(url: str, path: str, headers: dict[str, str], seen: Seen) -> None:
    async with connect(url.replace("http://", "ws://") + path, additional_headers=headers) as ws:
        try:
            async for raw in ws:
                message = json.loads(raw)
                seen.messages.append((message["event"], message.get("data")))
        except ConnectionClosed:
            pass
        seen.close_code = ws.close_code
    seen.ended = True


async def _state(http: httpx.AsyncClient, tid: str, headers: dict[str, str]) -> dict[str, Any]:
    r = await http.get(f"/tournaments/{tid}/game-state", headers=headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def _play(http: httpx.AsyncClient, tid: str, headers: list[dict[str, str]]) -> None:
    """Check or call for each of ``headers`` whenever it is its turn, until cancelled."""
    while True:
        for h in headers:
            r = await http.get(f"/tournaments/{tid}/game-state", headers=h)
            st = r.json() if r.status_code == 200 else {}
            legal = st.get("legalActions")
            if legal and (st.get("you") or {}).get("toAct"):
                action = "check" if "check" in legal["actions"] else "call"
                await http.post(
                    f"/tournaments/{tid}/act",
                    headers=h,
                    json={"handNumber": st["handNumber"], "turn": st["turn"], "action": action},
                )
        await asyncio.sleep(0.05)


async def _until_ended(readers: list[asyncio.Task[None]], limit: float) -> None:
    """Wait until both streams have ended (their readers return), at most ``limit`` seconds."""
    await asyncio.wait(readers, timeout=limit)


def _ended_unauthorized(sse: Seen, ws: Seen) -> None:
    assert sse.ended and sse.messages[-1][0] == "error", sse.messages[-3:]
    assert sse.messages[-1][1]["code"] == "unauthorized"
    assert ws.ended and ws.close_code == 4401, (ws.ended, ws.close_code)


async def _cancel(*tasks: asyncio.Task[Any]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def test_a_revoked_agents_streams_end_and_send_no_later_hand(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        body = {
            "name": "n6-revoke",
            "handPauseMs": 0,
            "settings": {
                "seats": 2,
                "entryFee": 100,
                "startingStack": 2000,
                # The revoked agent cannot act any more: each of its turns waits this long.
                "actionTimeoutSeconds": 5,
                "blindStructure": {
                    "startingSmallBlind": 10,
                    "increaseFactor": 1.5,
                    "levelDurationSeconds": 600,
                },
            },
        }
        r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
        assert r.status_code == 201, r.text
        tid = r.json()["tournamentId"]
        owners = [f"n6-{uuid.uuid4().hex[:6]}-{i}" for i in range(2)]
        made = [await new_agent(http, settings, owner) for owner in owners]
        for owner, agent in zip(owners, made, strict=True):
            await credit(http, settings, owner, 1000)
            h = agent_headers(agent["key"])
            r = await http.post(f"/tournaments/{tid}/register", json={}, headers=h)
            assert r.status_code == 200, r.text
            r = await http.post(f"/tournaments/{tid}/pay", json={"amount": 100}, headers=h)
            assert r.status_code == 200, r.text
        victim, other = made[0]["agentId"], made[1]
        headers = agent_headers(made[0]["key"])

        sse, ws = Seen(), Seen()
        readers = [
            asyncio.create_task(_read_sse(api_url, f"/tournaments/{tid}/me/stream", headers, sse)),
            asyncio.create_task(_read_ws(api_url, f"/tournaments/{tid}/me/ws", headers, ws)),
        ]
        # The other agent plays; the victim's turn comes (the streams announce it).
        opponent = asyncio.create_task(_play(http, tid, [agent_headers(other["key"])]))
        try:

            async def victims_turn() -> int | None:
                for seen in (sse, ws):
                    if not any(e == "action_required" for e, _ in seen.messages):
                        return None
                st = await _state(http, tid, headers)
                return int(st["handNumber"]) if (st.get("you") or {}).get("toAct") else None

            hand = await eventually(victims_turn, 30)
            assert sse.hands_with_cards(victim) and ws.hands_with_cards(victim)
            # A long-poll already waiting when the key is revoked (independent review of N6):
            # the table moves on at the victim's timeout, and the answer must not carry cards.
            version = (await _state(http, tid, headers))["version"]
            waiting = asyncio.create_task(
                http.get(
                    f"/tournaments/{tid}/game-state",
                    params={"waitForChange": version, "timeout": 20},
                    headers=headers,
                )
            )
            await asyncio.sleep(0.5)

            r = await http.post(f"/admin/agents/{victim}/revoke", headers=admin(settings))
            assert r.status_code == 200, r.text
            answered = await waiting
            assert answered.status_code == 401, answered.text[:300]
            assert (
                await http.get(f"/tournaments/{tid}/game-state", headers=headers)
            ).status_code == 401
            # Only the victim's timeout moves the table on now; meanwhile the streams end.
            # Then the hands go on (timeouts) while we keep listening.
            await _until_ended(readers, 15)
        finally:
            await _cancel(opponent, *readers)

    later = sorted(
        {n for n in sse.hands_with_cards(victim) + ws.hands_with_cards(victim) if n > hand}
    )
    assert later == [], f"hole cards of later hands {later} arrived after the revocation"
    _ended_unauthorized(sse, ws)


async def test_a_player_tokens_streams_end_at_its_exp(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_url: str,
    worker: Worker,
) -> None:
    tid = f"n6-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(
        client,
        db,
        task_queue,
        tid,
        {
            "seats": 2,
            "entryFee": 10,
            "startingStack": 2000,
            "actionTimeoutSeconds": 300,
            "blindStructure": {
                "startingSmallBlind": 10,
                "increaseFactor": 1.5,
                "levelDurationSeconds": 600,
            },
        },
        hand_pause_ms=0,
    )
    users = [f"{tid}-0", f"{tid}-1"]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:

        async def dealt() -> int | None:
            st = await _state(http, tid, player(settings, users[0]))
            return int(st["handNumber"]) if st.get("hand") else None

        hand = await eventually(dealt, 30)
        # A token that a thief copied: it expires in a few seconds.
        short = {"Authorization": f"Bearer {mint_player_token(settings, users[0], ttl_seconds=6)}"}
        exp = float(int(time.time()) + 6)
        sse, ws = Seen(), Seen()
        readers = [
            asyncio.create_task(_read_sse(api_url, f"/tournaments/{tid}/me/stream", short, sse)),
            asyncio.create_task(_read_ws(api_url, f"/tournaments/{tid}/me/ws", short, ws)),
        ]
        players: asyncio.Task[None] | None = None
        try:

            async def shown() -> bool | None:
                return (
                    bool(sse.hands_with_cards(users[0]) and ws.hands_with_cards(users[0])) or None
                )

            await eventually(shown, 10)
            # Nobody acts until the token has expired: the hand cannot move on meanwhile.
            await asyncio.sleep(max(0.0, exp - time.time()) + 1.5)
            # Then the victim plays on with its own (valid) token, hand after hand.
            players = asyncio.create_task(
                _play(http, tid, [player(settings, users[0]), player(settings, users[1])])
            )

            async def hands_went_on() -> bool | None:
                return (await dealt() or 0) > hand + 1 or None

            await eventually(hands_went_on, 30)
            await _until_ended(readers, 5)
        finally:
            await _cancel(*([players] if players else []), *readers)

    later = sorted(
        {n for n in sse.hands_with_cards(users[0]) + ws.hands_with_cards(users[0]) if n > hand}
    )
    assert later == [], f"hole cards of later hands {later} arrived after the token's exp"
    _ended_unauthorized(sse, ws)
