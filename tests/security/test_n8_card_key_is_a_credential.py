"""N8 (security review 2026-12-03): the Agent Card's key is a credential.

Whoever held the agent key could take the card key off (or replace it) at any time, mid-hand
included, and nobody was told; and each API replica trusted the card key it had read for
5 s, a "no key" included, so after a ``PUT /me/agent-card`` on one replica another kept
sending the agent's hole cards in clear. Now:

- a change is refused (``409 card_key_locked``) while the agent is dealt into a running hand,
  and takes effect between hands only; putting the same key again is a no-op, allowed;
- each change is recorded (``cardKeyChangedAt`` on the card) and the agent's open streams
  say so (``agent_card_changed``);
- no replica ever trusts a remembered "no key": a replica serves an agent's cards in clear
  only after reading, for that very read, that its card has no key.

Two API replicas serve one table: the key goes on through replica A between hands, and
replica B, which had just served the agent its cards in clear, must never do so again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from typing import Any

import httpx
from nacl.public import PrivateKey
from temporalio.worker import Worker

from api.ws_protocol import asyncapi_document
from core.card_seal import open_cards
from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.conftest import serve_api
from tests.integration.helpers import admin, credit, eventually
from tests.integration.test_ws_schema import Protocol


def _public(key: PrivateKey) -> str:
    return base64.b64encode(bytes(key.public_key)).decode()


def _mine(state: dict[str, Any], me: str) -> dict[str, Any] | None:
    seat = next((s["seat"] for s in state["seats"] if s["playerId"] == me), None)
    players = (state.get("hand") or {}).get("players", [])
    return next((p for p in players if p["seat"] == seat), None)


async def _state(http: httpx.AsyncClient, tid: str, headers: dict[str, str]) -> dict[str, Any]:
    r = await http.get(f"/tournaments/{tid}/game-state", headers=headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def _stream(url: str, path: str, headers: dict[str, str], out: list[tuple[str, Any]]) -> None:
    async with (
        httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30, read=None)) as http,
        http.stream("GET", path, headers=headers) as r,
    ):
        assert r.status_code == 200
        fields: dict[str, str] = {}
        async for line in r.aiter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if "event" in fields:
                    out.append((fields["event"], json.loads(fields.get("data") or "null")))
                fields = {}
                continue
            name, _, value = line.partition(":")
            fields[name] = value.strip()


async def test_a_card_key_put_on_one_replica_is_never_ignored_by_another_and_locks_mid_hand(
    settings: Settings, worker: Worker
) -> None:
    key, other_key = PrivateKey.generate(), PrivateKey.generate()
    async with (
        serve_api(settings) as url_a,
        serve_api(settings) as url_b,
        httpx.AsyncClient(base_url=url_a, timeout=30) as a,
        httpx.AsyncClient(base_url=url_b, timeout=30) as b,
    ):
        body = {
            "name": "n8",
            # Long enough between hands for the test to change the key there.
            "handPauseMs": 4000,
            "settings": {
                "seats": 2,
                "entryFee": 100,
                "startingStack": 2000,
                "actionTimeoutSeconds": 60,
                "blindStructure": {
                    "startingSmallBlind": 10,
                    "increaseFactor": 1.5,
                    "levelDurationSeconds": 600,
                },
            },
        }
        r = await a.post("/admin/tournaments", json=body, headers=admin(settings))
        assert r.status_code == 201, r.text
        tid = r.json()["tournamentId"]
        owners = ["n8-owner-x", "n8-owner-y"]
        made = [await new_agent(a, settings, f"{o}-{tid[-6:]}") for o in owners]
        headers = [agent_headers(m["key"]) for m in made]
        for m, h in zip(made, headers, strict=True):
            await credit(a, settings, m["ownerUserId"], 1000)
            r = await a.post(f"/tournaments/{tid}/register", json={}, headers=h)
            assert r.status_code == 200, r.text
            r = await a.post(f"/tournaments/{tid}/pay", json={"amount": 100}, headers=h)
            assert r.status_code == 200, r.text
        me, mine_h = made[0]["agentId"], headers[0]

        streamed: list[tuple[str, Any]] = []
        reader = asyncio.create_task(
            _stream(url_b, f"/tournaments/{tid}/me/stream", mine_h, streamed)
        )
        try:
            # Hand 1, no key yet: replica B shows the agent its cards in clear.
            async def dealt() -> dict[str, Any] | None:
                st = await _state(b, tid, mine_h)
                mine = _mine(st, me)
                return st if mine and mine["holeCards"] and not st["hand"]["over"] else None

            first = await eventually(dealt, 30)
            assert first["handNumber"] == 1

            # Whoever is to act folds: the hand is over, the next one comes in 4 s.
            async def folded() -> bool | None:
                for h in headers:
                    st = await _state(a, tid, h)
                    if (st.get("you") or {}).get("toAct"):
                        r = await a.post(
                            f"/tournaments/{tid}/act",
                            headers=h,
                            json={"handNumber": 1, "turn": st["turn"], "action": "fold"},
                        )
                        assert r.status_code == 200, r.text
                        return True
                return None

            await eventually(folded, 10)

            async def between_hands() -> bool | None:
                st = await _state(a, tid, mine_h)
                return (st["handNumber"] == 1 and st["hand"]["over"]) or None

            await eventually(between_hands, 5)
            # Replica B reads the card now (no key)...
            assert (await _state(b, tid, mine_h))["handNumber"] == 1
            # ... and the key goes on through replica A, between hands: allowed.
            r = await a.put("/me/agent-card", json={"publicKey": _public(key)}, headers=mine_h)
            assert r.status_code == 200, r.text
            changed_at = r.json()["cardKeyChangedAt"]
            assert changed_at is not None and r.json()["publicKey"] == _public(key)
            put_returned = len(streamed)

            # From now on replica B never sends the agent's cards in clear: hand 2 comes
            # sealed to the new key, on reads and on the stream.
            async def dealt_sealed() -> dict[str, Any] | None:
                st = await _state(b, tid, mine_h)
                mine = _mine(st, me)
                assert mine is None or mine["holeCards"] is None, f"clear cards on B: {mine}"
                return st if st["handNumber"] == 2 and mine and not st["hand"]["over"] else None

            second = await eventually(dealt_sealed, 15)
            mine = _mine(second, me)
            assert mine is not None and len(open_cards(bytes(key), mine["sealedHoleCards"])) == 2

            # Mid-hand, the key can neither be replaced nor taken off: coded, nothing changes.
            for r in (
                await a.put(
                    "/me/agent-card", json={"publicKey": _public(other_key)}, headers=mine_h
                ),
                await b.delete("/me/agent-card/public-key", headers=mine_h),
            ):
                assert (r.status_code, r.json()["code"]) == (409, "card_key_locked"), r.text
            # The same key again (a restarted client) changes nothing and is no refusal.
            r = await b.put("/me/agent-card", json={"publicKey": _public(key)}, headers=mine_h)
            assert r.status_code == 200, r.text
            card = (await b.get("/me/agent-card", headers=mine_h)).json()
            assert (card["publicKey"], card["cardKeyChangedAt"]) == (_public(key), changed_at)
            mine = _mine(await _state(b, tid, mine_h), me)
            assert mine is not None and mine["holeCards"] is None

            # The agent's open stream (on the other replica) was told of the change.
            async def told() -> dict[str, Any] | None:
                return next((d for e, d in streamed if e == "agent_card_changed"), None)

            event = await eventually(told, 5)
            assert event == {
                "agentId": me,
                "publicKey": _public(key),
                "cardKeyChangedAt": changed_at,
            }
            # The same body a socket sends, as the WebSocket's schema describes it (issue 28).
            Protocol(asyncapi_document("test")).check_sent(
                "tournamentPlayer", {"id": "1-1", "event": "agent_card_changed", "data": event}
            )
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
    # The stream never carried the cards in clear once the PUT had returned.
    for event, data in streamed[put_returned:]:
        if event == "game_state":
            mine = _mine(data, me)
            assert mine is None or mine["holeCards"] is None, (data["handNumber"], mine)
