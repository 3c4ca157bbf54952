"""H3 (security review): a seated player spends a room run's Update budget so that the other
players' actions are refused and they fold on timeout.

The attack: seated in a room, fire thousands of sit-ins (and repeated joins and leaves) at it. On the
reviewed main each one was an accepted Update; after Temporal's 2,000 per run, every Update
was refused, the opponent's act among them. Now a no-op is refused by the validator (no
history, no budget spent), the API still answers a repeated join or leave as before, and the
opponent acts normally.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from core.settings import Settings
from tests.integration.bots import passive
from tests.integration.helpers import credit, eventually, player
from tests.integration.test_rooms import open_room, workflow_id
from wire.table_messages import TableView
from workflows.room import RoomWorkflow

SPAM = 300
"""Enough to show that none reaches history (on the reviewed main each one did, and 2,000
froze the run); Temporal runs at most 10 Updates of one workflow at a time, so the spam is
sent 8 at a time."""


async def settled_history_length(handle: WorkflowHandle[Any, Any]) -> int:
    length = (await handle.describe()).history_length
    while True:
        await asyncio.sleep(0.5)
        now = (await handle.describe()).history_length
        if now == length:
            return now
        length = now


async def test_no_op_requests_spend_no_update_budget_and_opponents_still_act(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    attacker, victim = (f"h3-{n}-{uuid.uuid4().hex[:6]}" for n in "av")
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        room_id = await open_room(http, settings, seats=2, speed="slow")
        for user in (attacker, victim):
            await credit(http, settings, user, 5000)
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(settings, user))
            assert r.status_code == 200, r.text
        handle = client.get_workflow_handle(workflow_id(room_id))

        async def victim_to_act() -> TableView | None:
            view: TableView = await handle.query(RoomWorkflow.view, victim)
            hand = view.hand
            seat = next(s.seat for s in view.seats if s.player_id == victim)
            return view if hand and not hand["over"] and hand["actor"] == seat else None

        async def attacker_acts_if_asked() -> TableView | None:
            view: TableView = await handle.query(RoomWorkflow.view, attacker)
            hand = view.hand
            mine = next(s.seat for s in view.seats if s.player_id == attacker)
            if hand and not hand["over"] and hand["actor"] == mine:
                body = {"handNumber": view.hand_no, "turn": hand["turn"], "action": "call"}
                await http.post(
                    f"/rooms/{room_id}/action", json=body, headers=player(settings, attacker)
                )
                return None
            return await victim_to_act()

        view = await eventually(attacker_acts_if_asked)
        # The task that applied the attacker's call may still be committing (its events, the
        # publication): count from a history that has stopped moving.
        before = await settled_history_length(handle)

        # The attack, through the API as a client would send it.
        as_attacker = player(settings, attacker)
        gate = asyncio.Semaphore(8)

        async def spam(n: int) -> httpx.Response:
            async with gate:
                if n % 20 == 0:
                    return await http.post(f"/rooms/{room_id}/join", json={}, headers=as_attacker)
                return await http.post(f"/rooms/{room_id}/sit-in", headers=as_attacker)

        answers = await asyncio.gather(*(spam(n) for n in range(SPAM)))
        codes = {(r.status_code, r.json().get("code")) for r in answers}
        # A sit-in by a player who is not sitting out is a coded refusal; a repeated join
        # answers the seat already held, as it always did.
        assert codes == {(409, "invalid_state"), (200, None)}, codes
        joins = [r.json() for r in answers if r.status_code == 200]
        assert all(j["alreadySeated"] for j in joins)
        assert (await handle.describe()).history_length == before  # nothing reached history

        # The opponent's action goes through.
        assert view.hand is not None
        action, amount = passive(view.hand["legal"])
        body = {
            "handNumber": view.hand_no,
            "turn": view.hand["turn"],
            "action": action,
            "amount": amount,
        }
        r = await http.post(f"/rooms/{room_id}/action", json=body, headers=player(settings, victim))
        assert r.status_code == 200, r.text
