"""Hole cards sealed to an agent's own key (the fairness issue): agents with a key on their
Agent Card get their cards only as ``sealedHoleCards`` in game state and the stream, and
play a tournament to the end beside an agent without one (the SDK opens the boxes)."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import uuid
from typing import Any

import httpx
from nacl.public import PrivateKey
from temporalio.client import Client

from core.card_seal import open_cards
from core.settings import Settings
from sdk.bots import run_bot, tight_aggressive
from sdk.client import SngClient, new_card_key
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import credit, eventually, player
from tests.integration.test_player_streams import _sse
from tests.integration.test_tournament import create_fast, until_state


def _mine(state: dict[str, Any], me: str) -> dict[str, Any] | None:
    seat = next((s["seat"] for s in state["seats"] if s["playerId"] == me), None)
    players = (state.get("hand") or {}).get("players", [])
    return next((p for p in players if p["seat"] == seat), None)


def _sees_own_cards(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """The SDK's bots read ``holeCards``: on every turn the agent's own must be there."""
    assert sum(bool(p["holeCards"]) for p in state["hand"]["players"]) >= 1, state
    return tight_aggressive(state, rng)


async def test_agents_with_and_without_card_keys_play_a_tournament_to_the_end(
    api_url: str, settings: Settings, client: Client
) -> None:
    owners = [f"card-{uuid.uuid4().hex[:6]}-{i}" for i in range(3)]
    keys = [new_card_key(), new_card_key(), None]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create_fast(http, settings, 3, stack=300)
        made = [await new_agent(http, settings, owner) for owner in owners]
        for owner in owners:
            await credit(http, settings, owner, 1000)
        ids = [a["agentId"] for a in made]
        headers = [agent_headers(a["key"]) for a in made]

        # A player has no Agent Card; a key that is not X25519 is a coded 422, nothing set.
        valid = base64.b64encode(bytes(PrivateKey.generate().public_key)).decode()
        r = await http.put(
            "/me/agent-card", json={"publicKey": valid}, headers=player(settings, owners[0])
        )
        assert (r.status_code, r.json()["code"]) == (403, "forbidden")
        r = await http.put("/me/agent-card", json={"publicKey": "AA=="}, headers=headers[0])
        assert (r.status_code, r.json()["code"]) == (422, "validation_error"), r.text
        assert (await http.get("/me/agent-card", headers=headers[0])).json()["publicKey"] is None

        bots = [
            SngClient(api_url, agent_key=a["key"], card_key=k)
            for a, k in zip(made, keys, strict=True)
        ]
        try:
            for bot, key in zip(bots, keys, strict=True):
                if key is not None:
                    card = await bot.put_card_key()
                    assert card["publicKey"] and card["agentId"] in ids
                await bot.register(tid)
                await bot.pay(tid, 100)
            await until_state(http, tid, "playing")

            # While the first hand runs, read as each agent without the SDK.
            async def dealt() -> list[dict[str, Any]] | None:
                states = []
                for h in headers:
                    r = await http.get(f"/tournaments/{tid}/game-state", headers=h)
                    assert r.status_code == 200, r.text
                    states.append(r.json())
                return (
                    states if all(_mine(s, me) for s, me in zip(states, ids, strict=True)) else None
                )

            states = await eventually(dealt, 20)
            for state, me, key in zip(states, ids, keys, strict=True):
                mine = _mine(state, me)
                assert mine is not None
                if key is None:
                    assert len(mine["holeCards"]) == 2 and mine["sealedHoleCards"] is None
                    continue
                assert mine["holeCards"] is None and mine["sealedHoleCards"]
                cards = open_cards(key, mine["sealedHoleCards"])
                assert len(cards) == 2
                text = json.dumps(state)
                assert all(f'"{c}"' not in text for c in cards), "a sealed card is in clear"
                # Nobody else's key opens them.
                other = keys[1] if key == keys[0] else keys[0]
                assert other is not None
                try:
                    open_cards(other, mine["sealedHoleCards"])
                    raise AssertionError("another agent's key opened the box")
                except ValueError:
                    pass

            # The stream carries the same sealed box, never the cards in clear.
            messages = await _sse(
                http, f"/tournaments/{tid}/me/stream", headers[0], count=20, until="game_state"
            )
            body = json.loads(messages[-1][2])
            streamed = _mine(body, ids[0])
            assert streamed is not None and streamed["holeCards"] is None
            assert keys[0] is not None
            assert len(open_cards(keys[0], streamed["sealedHoleCards"])) == 2

            await asyncio.wait_for(
                asyncio.gather(
                    *(run_bot(bot, tid, _sees_own_cards, seed=i) for i, bot in enumerate(bots))
                ),
                timeout=240,
            )
        finally:
            for bot in bots:
                await bot.aclose()
        final = await until_state(http, tid, "closed", limit=60)
        assert sorted(f["playerId"] for f in final["standings"]) == sorted(ids)
        # The card key comes off: cards in clear again.
        r = await http.delete("/me/agent-card/public-key", headers=headers[0])
        assert r.status_code == 200 and r.json()["publicKey"] is None
