"""Cash-room clocks under Temporal's time skipping: decision timeouts, the disconnect grace,
removal after three sat-out hands, and the idle close. Activities are real (PostgreSQL)."""

from __future__ import annotations

import asyncio
import itertools
import sysconfig
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from core.temporal import data_converter
from db import ledger
from db.engine import Database
from domain.rooms import IDLE_CLOSE_SECONDS
from tests.integration.bots import passive
from tests.integration.helpers import eventually, set_stream
from tests.replay import StartedWorkflows, histories_from
from wire.table_messages import (
    ActInput,
    CloseRoomInput,
    JoinInput,
    LeaveInput,
    RoomSpec,
    RoomState,
    SitInInput,
    TableResult,
    TableView,
)
from workflows.room import RoomWorkflow

ENTRY = 1000


@pytest.fixture
async def room_clock_env() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server per test: these tests move its clock by hours (the shared one's
    other tests compare its clock with the wall clock), and a room a failed test left running
    must not hold the next test's clock."""
    path = Path(sysconfig.get_path("scripts")) / "temporal-test-server"
    started = StartedWorkflows()
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(path), data_converter=data_converter(), interceptors=[started]
    )
    yield env
    try:
        await started.replay_all(env.client)
    finally:
        await env.shutdown()


@pytest.fixture
async def ts_client(room_clock_env: WorkflowEnvironment, db: Database) -> AsyncIterator[Client]:
    from worker import build_worker

    client = room_clock_env.client
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, db, queue):
        client.ts_queue = queue  # type: ignore[attr-defined]
        yield client


async def open_room(
    client: Client, seats: int = 3, *, pause_ms: int = 0
) -> WorkflowHandle[Any, TableResult]:
    hexid = uuid.uuid4().hex[:10]
    now_ms = int(time.time() * 1000)
    st = RoomState(
        table_id=f"room-{hexid}",
        seat_count=seats,
        seats=[],
        hand_pause_ms=pause_ms,
        room=RoomSpec(
            room_id=f"room_{hexid}",
            name="clock",
            entry=ENTRY,
            small_blind=5,
            big_blind=10,
            speed="turbo",
            decision_timeout=10,
            disconnect_grace=30,
            created_ms=now_ms,
            idle_since_ms=now_ms,
        ),
    )
    handle = await client.start_workflow(
        RoomWorkflow.run,
        st,
        id=st.table_id,
        task_queue=client.ts_queue,  # type: ignore[attr-defined]
    )
    return handle


async def seat(db: Database, handle: WorkflowHandle[Any, Any], user: str) -> None:
    await ledger.transfer(
        db,
        key=f"test-credit-{user}",
        source=ledger.MINT,
        destination=ledger.user_account(user),
        amount=5 * ENTRY,
    )
    await handle.execute_update(RoomWorkflow.join, JoinInput(player_id=user, owner_user_id=user))


async def set_presence(db: Database, room_id: str, user: str, *, present: bool) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(
            text("DELETE FROM room_presence WHERE room_id = :r AND viewer = :v"),
            {"r": room_id, "v": user},
        )
        if present:
            await conn.execute(
                text(
                    "INSERT INTO room_presence (room_id, viewer, seated, last_seen)"
                    " VALUES (:r, :v, true, now())"
                ),
                {"r": room_id, "v": user},
            )


def actor_of(view: TableView) -> str | None:
    hand = view.hand
    if not hand or hand["over"] or hand["actor"] is None:
        return None
    return next(s.player_id for s in view.seats if s.seat == hand["actor"])


async def drive(
    handle: WorkflowHandle[Any, Any],
    bots: list[str],
    until: Callable[[TableView], bool],
    *,
    on_other: Callable[[TableView], Any],
    limit: int = 400,
) -> TableView:
    """Bots answer their turns at once; anyone else's turn is handed to ``on_other``."""
    for _ in range(limit):
        view = await handle.query(RoomWorkflow.view, None)
        if until(view):
            return view
        actor = actor_of(view)
        if actor is None:
            await asyncio.sleep(0.02)
        elif actor in bots:
            mine = await handle.query(RoomWorkflow.view, actor)
            if mine.hand and mine.hand.get("legal"):
                action, amount = passive(mine.hand["legal"])
                try:
                    await handle.execute_update(
                        RoomWorkflow.act,
                        ActInput(
                            player_id=actor,
                            hand_no=mine.hand_no,
                            turn=mine.hand["turn"],
                            action=action,
                            amount=amount,
                        ),
                    )
                except Exception:  # the turn moved on meanwhile: look again
                    pass
        else:
            await on_other(view)
    raise AssertionError("the room did not get there in time")


async def test_timeouts_grace_then_sit_out_then_removal_after_three_hands(
    ts_client: Client, room_clock_env: WorkflowEnvironment, db: Database
) -> None:
    env = room_clock_env
    handle = await open_room(ts_client)
    room_id = "room_" + handle.id.removeprefix("room-")
    a, b, c = (f"to-{n}-{uuid.uuid4().hex[:4]}" for n in "abc")
    for user in (a, b, c):
        await seat(db, handle, user)

    # c polls (is connected): its first timeout applies after the decision time alone.
    await set_presence(db, room_id, c, present=True)
    first = await drive(handle, [a, b], lambda v: actor_of(v) == c, on_other=env.sleep)
    turn = first.hand["turn"] if first.hand else -1
    await env.sleep(timedelta(seconds=11))
    after = await handle.query(RoomWorkflow.view, None)
    assert (after.hand_no, after.hand["turn"] if after.hand else None) != (first.hand_no, turn)
    seat_c = next(s for s in after.seats if s.player_id == c)
    assert seat_c.timeouts == 1 and not seat_c.sitting_out

    # c acts once (the streak resets), then its connection lapses: the next timeout waits
    # for the disconnect grace (30 s), not the decision time (10 s).
    async def c_acts(view: TableView) -> None:
        mine = await handle.query(RoomWorkflow.view, c)
        assert mine.hand is not None and mine.hand.get("legal")
        action, amount = passive(mine.hand["legal"])
        await handle.execute_update(
            RoomWorkflow.act,
            ActInput(
                player_id=c,
                hand_no=mine.hand_no,
                turn=mine.hand["turn"],
                action=action,
                amount=amount,
            ),
        )

    await drive(handle, [a, b], lambda v: actor_of(v) == c, on_other=env.sleep)
    await c_acts(await handle.query(RoomWorkflow.view, None))
    await set_presence(db, room_id, c, present=False)
    lapsed = await drive(handle, [a, b], lambda v: actor_of(v) == c, on_other=env.sleep)
    assert next(s for s in lapsed.seats if s.player_id == c).timeouts == 0
    lapsed_turn = (lapsed.hand_no, lapsed.hand["turn"] if lapsed.hand else None)
    await env.sleep(timedelta(seconds=11))
    held = await handle.query(RoomWorkflow.view, None)
    assert (held.hand_no, held.hand["turn"] if held.hand else None) == lapsed_turn
    await env.sleep(timedelta(seconds=20))
    moved = await handle.query(RoomWorkflow.view, None)
    assert (moved.hand_no, moved.hand["turn"] if moved.hand else None) != lapsed_turn

    # The next timeout in a row sits c out; three hands dealt without c remove c, and the
    # stack goes home.
    out = await drive(
        handle,
        [a, b],
        lambda v: any(s.player_id == c and s.sitting_out for s in v.seats),
        on_other=lambda _v: env.sleep(timedelta(seconds=11)),
    )
    sat_out_at = out.hand_no
    gone = await drive(
        handle,
        [a, b],
        lambda v: all(s.player_id != c for s in v.seats),
        on_other=lambda _v: env.sleep(timedelta(seconds=11)),
    )
    assert gone.hand_no >= sat_out_at + 3

    # The seat is gone from the view at once; the stack lands when the cash-out activity ran.
    async def cashed_out() -> bool:
        return await ledger.balance(db, ledger.room_seat_account(room_id, c)) == 0

    await eventually(cashed_out)
    home = await ledger.balance(db, ledger.user_account(c))
    assert home > 4 * ENTRY  # c's stack (it checked and folded, never went broke) is home

    # Everyone's chips are accounted for: balances plus the seats' accounts.
    total = 0
    for user in (a, b, c):
        total += await ledger.balance(db, ledger.user_account(user))
        total += await ledger.balance(db, ledger.room_seat_account(room_id, user))
    assert total == 3 * 5 * ENTRY
    await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
    result = await handle.result()
    # What a and b take home plus what c took home is the three entries.
    assert sum(result.stacks.values()) + (home - 4 * ENTRY) == 3 * ENTRY


async def test_a_second_timeout_in_a_row_folds_even_where_checking_is_legal(
    ts_client: Client, room_clock_env: WorkflowEnvironment, db: Database
) -> None:
    """Seed 004, "Decision timeouts": the second timeout in a row folds and sits the player
    out even where a check is legal (issue 28). Heads-up, c never acts: whether c is the
    big blind of hand 1 (its option, then the flop) or of hand 2 (after folding the small
    blind), its second timeout falls where a check is free."""
    env = room_clock_env
    handle = await open_room(ts_client, seats=2, pause_ms=20_000)
    room_id = "room_" + handle.id.removeprefix("room-")
    a, c = (f"t2-{n}-{uuid.uuid4().hex[:4]}" for n in "ac")
    for user in (a, c):
        await seat(db, handle, user)
    await set_presence(db, room_id, c, present=True)  # connected: no disconnect grace
    timeouts, paused_after = 0, 0
    for _ in range(400):
        view = await handle.query(RoomWorkflow.view, None)
        actor = actor_of(view)
        if actor == a:
            mine = await handle.query(RoomWorkflow.view, a)
            assert mine.hand is not None and mine.hand.get("legal")
            action, amount = passive(mine.hand["legal"])
            await handle.execute_update(
                RoomWorkflow.act,
                ActInput(
                    player_id=a,
                    hand_no=mine.hand_no,
                    turn=mine.hand["turn"],
                    action=action,
                    amount=amount,
                ),
            )
        elif actor == c:
            mine = await handle.query(RoomWorkflow.view, c)
            assert mine.hand is not None and mine.hand.get("legal")
            check_free = "check" in mine.hand["legal"]["actions"]
            await env.sleep(timedelta(seconds=11))
            timeouts += 1
            if timeouts == 2:
                break
        elif view.hand is not None and view.hand["over"] and paused_after < view.hand_no:
            paused_after = view.hand_no
            await env.sleep(timedelta(seconds=21))  # the pause between hands
        else:
            await asyncio.sleep(0.05)
    assert timeouts == 2 and check_free
    view = await handle.query(RoomWorkflow.view, None)
    assert view.hand is not None and view.hand["over"]
    c_seat = next(s for s in view.seats if s.player_id == c)
    last = view.hand["actions"][-1]
    assert (last["seat"], last["action"], last["auto"]) == (c_seat.seat, "fold", "timeout")
    assert c_seat.sitting_out
    await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
    result = await handle.result()
    assert sum(result.stacks.values()) == 2 * ENTRY


async def test_an_empty_room_closes_after_thirty_idle_minutes(
    ts_client: Client, room_clock_env: WorkflowEnvironment, db: Database
) -> None:
    handle = await open_room(ts_client)
    user = f"idle-{uuid.uuid4().hex[:4]}"
    await seat(db, handle, user)
    # Someone seated holds the room open however long it waits.
    await room_clock_env.sleep(timedelta(seconds=IDLE_CLOSE_SECONDS + 60))
    view = await handle.query(RoomWorkflow.view, None)
    assert not view.finished and view.room is not None and view.room.status == "waiting"
    # They leave: thirty minutes later the room closes itself.
    left = await handle.execute_update(RoomWorkflow.leave, LeaveInput(player_id=user))
    assert left.returned == ENTRY and not left.pending
    await room_clock_env.sleep(timedelta(seconds=IDLE_CLOSE_SECONDS - 60))
    assert not (await handle.query(RoomWorkflow.view, None)).finished
    result = await handle.result()  # time skips to the idle close
    assert result.stacks == {}
    final = await handle.query(RoomWorkflow.view, None)
    assert final.finished and final.room is not None and final.room.status == "closed"
    assert final.room.close_reason == "idle"
    assert await ledger.balance(db, ledger.user_account(user)) == 5 * ENTRY


async def test_room_histories_replay_with_overlapping_tasks_merged(
    room_clock_env: WorkflowEnvironment, ts_client: Client, db: Database
) -> None:
    """The forced interleavings of tests/integration/test_interleavings.py, for a room: two
    players act at once while the third only times out, and while it waits someone else's
    request comes in (its sit-in, a fourth player joining and leaving with money moves), so
    Updates, timeouts, the grace check, sitting out and removal overlap; then the room
    closes."""
    from tests.integration.test_interleavings import replay_every_merge

    handle = await open_room(ts_client, seats=4)
    room_id = f"room_{handle.id.removeprefix('room-')}"
    a, b, c, d = (f"{room_id}-{n}" for n in "abcd")
    for user in (a, b, c):
        await seat(db, handle, user)
    await ledger.transfer(
        db,
        key=f"test-credit-{d}",
        source=ledger.MINT,
        destination=ledger.user_account(d),
        amount=5 * ENTRY,
    )
    await set_presence(db, room_id, c, present=True)
    pokes = itertools.cycle(["join", "sit_in", "leave", "sit_in"])

    async def poke_then_time_out(_view: TableView) -> None:
        kind = next(pokes)
        try:
            if kind == "sit_in":
                await handle.execute_update(RoomWorkflow.sit_in, SitInInput(player_id=c))
            elif kind == "join":
                await handle.execute_update(
                    RoomWorkflow.join, JoinInput(player_id=d, owner_user_id=d)
                )
            else:
                await handle.execute_update(RoomWorkflow.leave, LeaveInput(player_id=d))
        except WorkflowUpdateFailedError:
            pass  # a no-op (c has not timed out yet, d is already leaving), refused: no task
        await room_clock_env.sleep(timedelta(seconds=11))

    view = await drive(
        handle,
        [a, b],
        lambda v: v.hand_no >= 6 or all(s.player_id != c for s in v.seats),
        on_other=poke_then_time_out,
    )
    assert view.hand_no >= 2
    await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
    await handle.result()
    found = await histories_from(ts_client, [handle.id])
    merges, failures = await replay_every_merge(ts_client, found)
    assert merges >= 3, f"only {merges} overlapping pairs: the scenario no longer overlaps"
    assert failures == []


async def _turn_of(handle: WorkflowHandle[Any, Any], user: str) -> tuple[int, int]:
    mine = await handle.query(RoomWorkflow.view, user)
    assert mine.hand is not None and not mine.hand["over"]
    return mine.hand_no, mine.hand["turn"]


async def _turn_now(handle: WorkflowHandle[Any, Any]) -> tuple[int, int | None]:
    view = await handle.query(RoomWorkflow.view, None)
    return view.hand_no, (view.hand["turn"] if view.hand and not view.hand["over"] else None)


async def test_a_stream_drop_holds_the_decision_for_the_grace_and_a_late_act_counts(
    ts_client: Client, room_clock_env: WorkflowEnvironment, db: Database
) -> None:
    """Seed 004: "If a player's WebSocket drops, they get disconnectGrace seconds to reconnect
    before the timeout rules apply" (issue 28). c was connected (its stream touched its
    presence) and drops in the middle of its decision: the 10 s decision time runs out, the
    table holds the decision until the drop plus the 30 s grace, shows so in c's seat, and c,
    back within the grace, acts: the action counts and no timeout is recorded."""
    env = room_clock_env
    handle = await open_room(ts_client)
    room_id = "room_" + handle.id.removeprefix("room-")
    a, b, c = (f"gr-{n}-{uuid.uuid4().hex[:4]}" for n in "abc")
    for user in (a, b, c):
        await seat(db, handle, user)
    await set_presence(db, room_id, c, present=True)
    await set_stream(db, handle.id, c, None)
    await drive(handle, [a, b], lambda v: actor_of(v) == c, on_other=env.sleep)
    turn = await _turn_of(handle, c)
    await set_stream(db, handle.id, c, 0)  # the stream drops now

    await env.sleep(timedelta(seconds=25))  # past the decision time, within the grace
    held = await handle.query(RoomWorkflow.view, None)
    assert await _turn_now(handle) == turn
    seat_c = next(s for s in held.seats if s.player_id == c)
    assert seat_c.timeouts == 0
    assert seat_c.grace_until is not None and seat_c.disconnected_at is not None
    assert seat_c.grace_until == held.deadline_ms
    assert 29_990 <= seat_c.grace_until - seat_c.disconnected_at <= 30_000  # 30 s from the drop

    await set_stream(db, handle.id, c, None)  # back
    mine = await handle.query(RoomWorkflow.view, c)
    assert mine.hand is not None and mine.hand.get("legal")
    action, amount = passive(mine.hand["legal"])
    result = await handle.execute_update(
        RoomWorkflow.act,
        ActInput(player_id=c, hand_no=turn[0], turn=turn[1], action=action, amount=amount),
    )
    assert result.ok
    after = await handle.query(RoomWorkflow.view, None)
    seat_c = next(s for s in after.seats if s.player_id == c)
    assert seat_c.timeouts == 0 and not seat_c.sitting_out
    assert seat_c.grace_until is None and seat_c.disconnected_at is None
    assert after.hand is not None
    mine_acts = [x for x in after.hand["actions"] if x.get("seat") == seat_c.seat]
    assert mine_acts and not mine_acts[-1].get("auto")
    await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
    await handle.result()


async def test_past_the_grace_from_the_drop_the_timeout_rules_apply(
    ts_client: Client, room_clock_env: WorkflowEnvironment, db: Database
) -> None:
    """The grace is measured from the drop: when c's 10 s decision timer runs out, its
    stream has been down for 20 s, so the table holds the decision 10 s more (the drop plus
    30 s), not 0 s (the decision time alone) nor until 30 s from the decision's start (the
    rule for lapsed polling); then the timeout applies. Its next timeout, long past the
    grace, applies at the decision time and sits c out (the second in a row). (The database's
    clock, which dates the drop, does not skip with the test server's: the drop's age is
    the one the table reads when the timer fires.)"""
    env = room_clock_env
    handle = await open_room(ts_client)
    room_id = "room_" + handle.id.removeprefix("room-")
    a, b, c = (f"gp-{n}-{uuid.uuid4().hex[:4]}" for n in "abc")
    for user in (a, b, c):
        await seat(db, handle, user)
    await set_presence(db, room_id, c, present=True)  # its stream kept it present until now
    await drive(handle, [a, b], lambda v: actor_of(v) == c, on_other=env.sleep)
    turn = await _turn_of(handle, c)
    await set_stream(db, handle.id, c, 20)

    await env.sleep(timedelta(seconds=11))
    assert await _turn_now(handle) == turn  # held past the decision time
    await env.sleep(timedelta(seconds=7))  # 18 s
    assert await _turn_now(handle) == turn
    await env.sleep(timedelta(seconds=4))  # 22 s: the drop plus 30 s was ~20 s
    assert await _turn_now(handle) != turn  # not held for 30 s from the decision's start
    view = await handle.query(RoomWorkflow.view, None)
    seat_c = next(s for s in view.seats if s.player_id == c)
    assert seat_c.timeouts == 1 and seat_c.grace_until is None
    assert view.hand is not None
    last_c = [x for x in view.hand["actions"] if x.get("seat") == seat_c.seat][-1]
    assert last_c["auto"] == "timeout"

    # Long past the grace (by the database's clock too): the decision time alone.
    await set_stream(db, handle.id, c, 120)
    again = await drive(
        handle,
        [a, b],
        lambda v: actor_of(v) == c or any(s.player_id == c and s.sitting_out for s in v.seats),
        on_other=env.sleep,
    )
    if actor_of(again) == c:
        await env.sleep(timedelta(seconds=11))
    out = await handle.query(RoomWorkflow.view, None)
    assert any(s.player_id == c and s.sitting_out for s in out.seats)
    await handle.execute_update(RoomWorkflow.close, CloseRoomInput(reason="test"))
    await handle.result()
