"""M5 (security review): a room leave that reaches the table with the hand-ending action.

The attack: the winner of a hand asks to leave at the moment the last action ends it. When
the leave and that action were applied in one activation, the old room cashed out the
pre-hand stack (the pot lost) and then failed every workflow task with a ``KeyError``: the
room wedged with every stack in it. Here both Updates are made to arrive in one workflow task
for real: they are sent while no worker polls the task queue, then a worker starts.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from temporalio.client import Client, WorkflowHandle

from db import ledger
from db.engine import Database
from tests.integration.helpers import eventually
from wire.table_messages import (
    ActInput,
    CloseRoomInput,
    JoinInput,
    LeaveInput,
    RoomSpec,
    RoomState,
    TableView,
)
from workflows.room import RoomWorkflow

ENTRY = 1000


async def _open_room(client: Client, queue: str) -> WorkflowHandle[Any, Any]:
    hexid = uuid.uuid4().hex
    now_ms = int(time.time() * 1000)
    st = RoomState(
        table_id=f"room-{hexid}",
        seat_count=2,
        seats=[],
        hand_pause_ms=0,
        room=RoomSpec(
            room_id=f"room_{hexid}",
            name="m5",
            entry=ENTRY,
            small_blind=5,
            big_blind=10,
            speed="slow",
            decision_timeout=120,
            disconnect_grace=300,
            created_ms=now_ms,
            idle_since_ms=now_ms,
        ),
    )
    return await client.start_workflow(RoomWorkflow.run, st, id=st.table_id, task_queue=queue)


async def _in_hand(handle: WorkflowHandle[Any, Any]) -> TableView | None:
    view: TableView = await handle.query(RoomWorkflow.view, None)
    hand = view.hand
    return view if hand and not hand["over"] and hand["actor"] is not None else None


async def test_a_leave_with_the_hand_ending_action_is_taken_after_the_hand(
    client: Client, db: Database
) -> None:
    from worker import build_worker

    queue = f"tq-{uuid.uuid4().hex[:12]}"
    async with build_worker(client, db, queue):
        handle = await _open_room(client, queue)
        players = [f"m5-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
        for user in players:
            await ledger.transfer(
                db,
                key=f"test-credit-{user}",
                source=ledger.MINT,
                destination=ledger.user_account(user),
                amount=5 * ENTRY,
            )
            await handle.execute_update(
                RoomWorkflow.join, JoinInput(player_id=user, owner_user_id=user)
            )
        view = await eventually(lambda: _in_hand(handle))
    # Heads-up preflop: the actor folding ends the hand, and the other player wins the blinds.
    assert view.hand is not None
    actor = next(s.player_id for s in view.seats if s.seat == view.hand["actor"])
    winner = next(p for p in players if p != actor)
    before = {s.player_id: s.stack for s in view.seats}

    # No worker polls now: both Updates wait at the server and reach the next worker together.
    fold = asyncio.create_task(
        handle.execute_update(
            RoomWorkflow.act,
            ActInput(player_id=actor, hand_no=view.hand_no, turn=view.hand["turn"], action="fold"),
        )
    )
    await asyncio.sleep(0.5)
    leave = asyncio.create_task(
        handle.execute_update(RoomWorkflow.leave, LeaveInput(player_id=winner))
    )
    await asyncio.sleep(0.5)
    async with build_worker(client, db, queue):
        await asyncio.wait_for(fold, 30)
        left = await asyncio.wait_for(leave, 30)
        # The winner leaves with the hand's result, not with the stack from before it.
        won = await eventually(lambda: _home_with_winnings(db, winner))
        assert won > before[winner], (won, before)
        assert left.pending or left.returned == won
        # The room is not wedged: it answers, closes, and every chip is home.
        after: TableView = await handle.query(RoomWorkflow.view, None)
        assert all(s.player_id != winner for s in after.seats)
        await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
        await asyncio.wait_for(handle.result(), 30)
        total = 0
        for user in players:
            total += await ledger.balance(db, ledger.user_account(user))
            assert after.room is not None
            assert await ledger.balance(db, ledger.room_seat_account(after.room.room_id, user)) == 0
        assert total == 2 * 5 * ENTRY
    # The fold and the leave really were accepted in one workflow task.
    history = await handle.fetch_history()
    task, accepted_in = 0, {}
    for event in history.events:
        if event.HasField("workflow_task_completed_event_attributes"):
            task += 1
        if event.HasField("workflow_execution_update_accepted_event_attributes"):
            name = event.workflow_execution_update_accepted_event_attributes.accepted_request
            accepted_in.setdefault(name.input.name, task)
    assert accepted_in["act"] == accepted_in["leave"], accepted_in


async def _home_with_winnings(db: Database, user: str) -> int | None:
    home = await ledger.balance(db, ledger.user_account(user))
    return home - 4 * ENTRY if home > 4 * ENTRY else None
