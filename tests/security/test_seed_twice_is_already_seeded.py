"""A player's second seed for a hand is ``409 already_seeded`` (docs/fairness.md, docs/api.md).

The seed Update's id was ``seed:<player>:<hand>``, and Temporal answers a second Update with
the id of one it already completed with the first one's outcome, without running the
validator: a second seed for a hand, whatever its seed or root, answered ``200`` with the
first answer, so a client could not tell that its new seed was ignored. Now every seed is
checked by the table, and a seat that already seeded the hand is refused, with the wrong root
too (it names what is wrong with this seat's request first).
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from temporalio.worker import Worker

from core.settings import Settings
from tests.integration.helpers import credit, eventually, player
from tests.integration.test_rooms import open_room


async def test_a_second_seed_for_a_hand_is_already_seeded(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    users = [f"seed2-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for u in users:
            await credit(http, settings, u, 5000)
        room_id = await open_room(http, settings, seats=2)
        for u in users:
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, u))
            assert r.status_code == 200, r.text

        async def next_deck() -> dict[str, Any] | None:
            r = await http.get(
                f"/rooms/{room_id}/game-state",
                params={"timeout": 0},
                headers=player(settings, users[0]),
            )
            assert r.status_code == 200, r.text
            deck: dict[str, Any] | None = r.json().get("nextDeck")
            return deck

        deck = await eventually(next_deck, limit=20)
        path = f"/rooms/{room_id}/seed"
        me = player(settings, users[0])
        body = {"handNumber": deck["handNumber"], "commitment": deck["commitment"], "seed": "aa"}
        first = await http.post(path, json=body, headers=me)
        assert first.status_code == 200, first.text

        # The very same seed again, another seed, and another seed with a wrong root: each
        # is a second seed for the hand.
        for again in (body, {**body, "seed": "bb" * 32}, {**body, "commitment": "00" * 32}):
            r = await http.post(path, json=again, headers=me)
            assert r.status_code == 409, (again, r.text)
            assert r.json()["code"] == "already_seeded", r.text

        # The seat's first seed is the one the table holds; the other seat still may seed.
        r = await http.post(path, json=body, headers=player(settings, users[1]))
        assert r.status_code == 200, r.text
