"""Card commitments end to end (docs/fairness.md): what an observer, another player and the
player who folded can each read of a finished hand, and the verifier on what the API serves.

Three bots play a cash room through the client library (which seeds every next hand): one
folds whenever it faces a bet, two check and call down, so hands end in folds, in showdowns
where both show, and in showdowns where the loser mucks.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import uuid
from typing import Any

import httpx
from sqlalchemy import text
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from domain.fairness import record_hash, verify_record
from sdk.bots import run_room_bot
from sdk.client import SngClient
from sng.cli_hand import verify_chain
from tests.integration.helpers import credit, eventually, player
from tests.integration.test_rooms import open_room, record, workflow_id
from worker import build_replayer

HANDS = 8


def folder(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    legal = state["legalActions"]
    if legal["toCall"] > 0 and "fold" in legal["actions"]:
        return "fold", None
    return ("check", None) if "check" in legal["actions"] else ("call", None)


def caller(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    legal = state["legalActions"]
    return ("check", None) if "check" in legal["actions"] else ("call", None)


async def test_each_reader_sees_only_what_the_rules_show_and_every_record_verifies(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    users = [f"fair-{uuid.uuid4().hex[:6]}" for _ in range(3)]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in users:
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings)
        bots = [SngClient(api_url, token=mint_player_token(settings, u)) for u in users]
        try:
            await asyncio.wait_for(
                asyncio.gather(
                    *(
                        run_room_bot(bot, room_id, policy, hands=HANDS, seed=i)
                        for i, (bot, policy) in enumerate(
                            zip(bots, (folder, caller, caller), strict=True)
                        )
                    )
                ),
                timeout=240,
            )
        finally:
            for bot in bots:
                await bot.aclose()
        await eventually(lambda: _hands(http, room_id), limit=30)
        listed = (await http.get(f"/rooms/{room_id}/hands")).json()
        numbers = [h["handNumber"] for h in listed]
        assert len(numbers) >= HANDS - 1, listed

        observed: list[dict[str, Any]] = []
        saw = {"fold": 0, "muck": 0, "both_shown": 0, "seeded": 0}
        for n in numbers:
            public = (await http.get(f"/rooms/{room_id}/hands/{n}")).json()
            observed.append(public)
            assert verify_record(public) == [], (n, verify_record(public))
            assert "deckSeed" not in public and "yourCards" not in public
            shown = set(public["shown"])
            assert set(public["holeCards"]) == shown, public  # an observer: shown hands only
            revealed = {c["card"] for c in public["deck"]["revealed"]}
            assert revealed == set(public["board"]) | {
                c for s in shown for c in public["shown"][s]["cards"]
            }
            folded = {a["seat"] for a in public["actions"] if a["action"] == "fold"}
            mucked = set(map(int, public["showdownOrder"])) - {int(s) for s in shown}
            saw["fold"] += bool(folded)
            saw["muck"] += bool(mucked)
            saw["both_shown"] += len(shown) >= 2
            saw["seeded"] += len(public["deck"]["seeds"]) >= 2
            for seat, user in public["players"].items():
                mine = (
                    await http.get(f"/rooms/{room_id}/hands/{n}", headers=player(settings, user))
                ).json()
                assert verify_record(mine) == [], verify_record(mine)
                cards = mine["yourCards"]["cards"]
                assert mine["yourCards"]["seat"] == int(seat) and len(cards) == 2
                # Their own cards (apart), the shown hands, and nobody else's.
                assert set(mine["holeCards"]) == shown
                others = set(public["players"]) - shown - {seat}
                for other in others:
                    other_user = public["players"][other]
                    theirs = (
                        await http.get(
                            f"/rooms/{room_id}/hands/{n}", headers=player(settings, other_user)
                        )
                    ).json()["yourCards"]["cards"]
                    # A folded or mucked hand appears nowhere in what this player reads
                    # (but a card of it may be on the board or in a shown hand).
                    public_cards = revealed | set(cards)
                    hidden = [c for c in theirs if c not in public_cards]
                    assert not any(f'"{c}"' in json.dumps(mine) for c in hidden), (n, seat)
                    assert not any(f'"{c}"' in json.dumps(public) for c in hidden), (n, other)
        assert saw["fold"] and saw["muck"] and saw["both_shown"], saw
        assert saw["seeded"], saw  # the client library seeded the hands after the first

        # The records form one chain; the verifier takes it and refuses any change.
        assert verify_chain(observed) == []
        assert [r["prevHash"] for r in observed[1:]] == [r["hash"] for r in observed[:-1]]
        last = observed[-1]
        # A forger rewrites the record's hash too: each change is caught by its own check.
        target = next(r for r in reversed(observed) if r["deck"]["revealed"])
        for change in (_card, _salt, _seed):
            forged = copy.deepcopy(target)
            change(forged)
            forged["hash"] = record_hash(forged)
            assert verify_record(forged), change.__name__
        relinked = copy.deepcopy(observed)
        relinked[-1]["prevHash"] = "00" * 32
        relinked[-1]["hash"] = record_hash(relinked[-1])
        assert verify_record(relinked[-1]) == [] and verify_chain(relinked)

        # Nothing an observer reads while or after the room plays carries an unshown card:
        # the game state's last hand, the stream's events.
        state = (await http.get(f"/rooms/{room_id}/game-state", params={"timeout": 0})).json()
        lasthand = state["lastHand"]
        assert lasthand is None or "deckSeed" not in lasthand or lasthand["deckSeed"] is None

        # The room deals on after the bots stop (their seats time out), so the head may have
        # moved past the hands read above: it is the hash of the last hand recorded when read.
        async def head_is_last() -> tuple[int, str] | None:
            state = (await http.get(f"/rooms/{room_id}/game-state", params={"timeout": 0})).json()
            listed = (await http.get(f"/rooms/{room_id}/hands")).json()
            newest = max(h["handNumber"] for h in listed)
            record = (await http.get(f"/rooms/{room_id}/hands/{newest}")).json()
            return (newest, record["hash"]) if state["chainHead"] == record["hash"] else None

        newest, head = await eventually(head_is_last, limit=30)
        assert newest >= numbers[-1]
        if newest == numbers[-1]:
            assert head == last["hash"]
        events = (await http.get(f"/rooms/{room_id}/events.json", params={"limit": 500})).json()
        results = [e["data"] for e in events["events"] if e["type"] == "hand_result"]
        assert results and all(
            "deckSeed" not in r and r["deck"]["version"] == "v2" for r in results
        )

        # The stored rows keep each seat's cards sealed: no folded hand in the clear.
        async with db.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text("SELECT record FROM hands WHERE table_id = :t"),
                    {"t": workflow_id(room_id)},
                )
            ).all()
        for (stored,) in rows:
            assert set(stored["hole_cards"]) == set(stored["shown"])
            assert all(isinstance(v, str) for v in stored["private"].values())
            assert "deck_seed" not in stored and "secret" not in json.dumps(stored)
        assert (await record(http, room_id))["status"] in ("paused", "waiting", "closed")

    history = await client.get_workflow_handle(workflow_id(room_id)).fetch_history()
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    await replayer.replay_workflow(history)


async def _hands(http: httpx.AsyncClient, room_id: str) -> list[Any] | None:
    listed: list[Any] = (await http.get(f"/rooms/{room_id}/hands")).json()
    return listed if len(listed) >= HANDS - 1 else None


def _card(record: dict[str, Any]) -> None:
    """One revealed card swapped for another (and the board with it)."""
    item = record["deck"]["revealed"][0]
    new = "2c" if item["card"] != "2c" else "3c"
    record["board"] = [new if c == item["card"] else c for c in record["board"]]
    item["card"] = new


def _salt(record: dict[str, Any]) -> None:
    record["deck"]["revealed"][-1]["salt"] = "00" * 32


def _seed(record: dict[str, Any]) -> None:
    """One more seed than was sent: the seeds give another dealing order."""
    record["deck"]["seeds"]["9"] = "ab"
