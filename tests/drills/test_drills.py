"""Fault drills: kill -9 the worker at random moments, restart Temporal, stop PostgreSQL.

After each, every tournament completes with its invariants intact (tests/drills/invariants.py).
They are long (marked slow) and CI runs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from db import ledger
from db.engine import Database
from db.models import Hand
from tests.drills.conftest import DrillStack
from tests.drills.invariants import check_tournament
from tests.integration.bots import play, shove
from tests.replay import replay_everything
from wire.messages import CreateTournamentInput, PayEntryInput, RegisterInput, TournamentView
from wire.table_messages import ActInput
from workflows.table import TableWorkflow
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow
ENTRY, STACK = 100, 300
SHORT_STACK = 100
"""The two-worker drill's stacks: 5 big blinds, so a few shoves decide each tournament (150,
until it was CI's longest test at four minutes; the interleavings are the same)."""


def settings_for(seats: int) -> dict[str, object]:
    return {
        "seats": seats,
        "entryFee": ENTRY,
        "rakeFee": 10,
        "startingStack": STACK,
        "actionTimeoutSeconds": 60,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }


async def retrying(send: Callable[[], Awaitable[object]], *, done_code: str) -> None:
    """What a real client does when a worker is down: ask again. A retry that finds the first
    attempt already applied is refused with ``done_code``, which means done."""
    for _ in range(30):
        try:
            await send()
            return
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            continue
        except WorkflowUpdateFailedError as err:
            if isinstance(err.cause, ApplicationError) and err.cause.type == done_code:
                return
            raise
    raise AssertionError("update never went through")


async def run_tournament(
    client: Client,
    db: Database,
    task_queue: str,
    seats: int,
    tid: str | None = None,
    *,
    gate: asyncio.Event | None = None,
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    """A tournament registered, paid and played to the end by shoving bots; with ``gate``,
    the bots hold their first action until it is set (the table deals and waits meanwhile)."""
    tid = tid or f"drill-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid, name=tid, settings=settings_for(seats), hand_pause_ms=0
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    players = [f"{tid}-p{i}" for i in range(seats)]
    for p in players:
        await ledger.transfer(
            db,
            key=f"seed:{p}",
            source=ledger.MINT,
            destination=ledger.user_account(p),
            amount=ENTRY,
        )
        register = RegisterInput(player_id=p, owner_user_id=p)
        pay = PayEntryInput(player_id=p, amount=ENTRY)
        await retrying(
            functools.partial(handle.execute_update, TournamentWorkflow.register, register),
            done_code="tournament_already_registered",
        )
        await retrying(
            functools.partial(handle.execute_update, TournamentWorkflow.pay_entry, pay),
            done_code="tournament_already_registered",
        )
    if gate is not None:
        await gate.wait()
    # The table's id is fixed by the tournament's; the bots wait for it to exist.
    await play(client, f"table-{tid}-1", players, shove, limit=240)
    return handle


async def test_worker_killed_at_random_moments(
    drill: DrillStack, drill_client: Client, drill_db: Database
) -> None:
    rng = random.Random(7)
    done = asyncio.Event()

    async def chaos() -> None:
        # A new worker needs ~2 s to start and replays what it picks up (its cache died with
        # the old one), so kills come every few seconds: often enough to land mid-registration,
        # mid-hand and mid-settlement, rarely enough for the work to move on. Eight kills,
        # then play finishes in peace: the drill's length is bounded by the kills, not by how
        # long each recovery takes (it swung from two to four minutes of CI's 25).
        while not done.is_set() and drill.kills < 8:
            await asyncio.sleep(rng.uniform(5.0, 9.0))
            drill.kill_worker()
            await asyncio.sleep(rng.uniform(0.1, 0.5))
            drill.start_worker()

    chaos_task = asyncio.create_task(chaos())
    try:
        handles = []
        # Five tournaments at once (ten, in two waves, until the tables' publications made
        # play slower and this drill alone took four of CI's 25 minutes; the two-worker drill
        # below is the one that hunts interleavings, this one checks money under plain kills).
        for wave in range(1):
            batch = await asyncio.gather(
                *(
                    run_tournament(drill_client, drill_db, drill.task_queue, 2 + (wave + i) % 2)
                    for i in range(5)
                )
            )
            handles.extend(batch)
        views = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 240)
    finally:
        done.set()
        await chaos_task
        if drill.worker is None or drill.worker.poll() is not None:
            drill.start_worker()
    assert drill.kills >= 4, drill.kills
    for view in views:
        await check_tournament(drill_db, view, entry_fee=ENTRY, stack=STACK)


async def hand_under_way(client: Client, tid: str, *, limit: float = 60) -> int:
    """Wait until the tournament's table deals; the hand number it is at (the fault that
    follows then lands mid-play, never during registration)."""
    handle = client.get_workflow_handle_for(TableWorkflow.run, f"table-{tid}-1")
    deadline = asyncio.get_running_loop().time() + limit
    while asyncio.get_running_loop().time() < deadline:
        with contextlib.suppress(RPCError, WorkflowQueryFailedError):
            view = await handle.query(TableWorkflow.view, None, rpc_timeout=timedelta(seconds=2))
            if view.hand_no >= 1 and not view.finished:
                return view.hand_no
        await asyncio.sleep(0.2)
    raise AssertionError("the table never dealt: the fault would not have overlapped play")


async def hands_recorded(db: Database, tid: str) -> int:
    async with db.session() as session:
        rows = await session.exec(select(Hand).where(Hand.tournament_id == tid, Hand.hand_no > 0))
        return len(rows.all())


async def test_temporal_server_restarted_mid_tournament(
    drill: DrillStack, drill_client: Client, drill_db: Database
) -> None:
    tid = f"drill-{uuid.uuid4().hex[:8]}"
    at_fault: list[int] = []
    gate = asyncio.Event()  # the bots wait: the restart lands mid-hand, not after the end

    async def restart_mid_play() -> None:
        try:
            at_fault.append(await hand_under_way(drill_client, tid))
            drill.stop_temporal()
            await asyncio.sleep(1.0)
            drill.start_temporal()
        finally:
            gate.set()

    restart = asyncio.create_task(restart_mid_play())
    handle = await run_tournament(drill_client, drill_db, drill.task_queue, 3, tid, gate=gate)
    await restart
    view = await asyncio.wait_for(handle.result(), 120)
    await check_tournament(drill_db, view, entry_fee=ENTRY, stack=STACK)
    # The restart overlapped play: dealing had begun before it and went on after it.
    assert await hands_recorded(drill_db, tid) >= at_fault[0], at_fault


async def test_postgres_down_for_30_seconds(
    drill: DrillStack, drill_client: Client, drill_db: Database
) -> None:
    tid = f"drill-{uuid.uuid4().hex[:8]}"
    gate = asyncio.Event()  # the bots wait: the outage lands mid-hand, not after the end
    tid_handle = asyncio.create_task(
        run_tournament(drill_client, drill_db, drill.task_queue, 3, tid, gate=gate)
    )
    try:
        at_fault = await hand_under_way(drill_client, tid)
        drill.pg.stop()
        gate.set()  # play on while PostgreSQL is away: actions, publications and hand reports
        await asyncio.sleep(30)
        drill.pg.start()
    finally:
        gate.set()
    handle = await tid_handle
    view = await asyncio.wait_for(handle.result(), 180)
    await drill_db.engine.dispose()  # drop connections that died with the server
    await check_tournament(drill_db, view, entry_fee=ENTRY, stack=STACK)
    # The outage overlapped play: the table was dealing hand ``at_fault`` when PostgreSQL
    # went away, and hands were still recorded after it came back.
    assert await hands_recorded(drill_db, tid) >= at_fault, at_fault


def slow_shove(rng: random.Random) -> Callable[[dict[str, Any]], Awaitable[tuple[str, int | None]]]:
    """All-in, but thinking for about the decision time: half the answers race the timer."""

    async def decide(legal: dict[str, Any]) -> tuple[str, int | None]:
        await asyncio.sleep(rng.uniform(2.0, 3.6))
        return shove(legal)

    return decide


async def act_slowly(
    client: Client, table_id: str, players: list[str], rng: random.Random, *, limit: float
) -> None:
    """Bots that answer close to their timeout, and keep reading the table as the API does
    (queries are what let a worker apply a stuck task's events early)."""
    handle = client.get_workflow_handle_for(TableWorkflow.run, table_id)
    decide = slow_shove(rng)
    deadline = asyncio.get_running_loop().time() + limit

    async def seat(player: str) -> None:
        while asyncio.get_running_loop().time() < deadline:
            try:
                view = await handle.query(
                    TableWorkflow.view, player, rpc_timeout=timedelta(seconds=2)
                )
            except (RPCError, WorkflowQueryFailedError):
                await asyncio.sleep(0.2)
                continue
            if view.finished:
                return
            legal = view.hand.get("legal") if view.hand else None
            if not legal:
                await asyncio.sleep(0.1)
                continue
            action, amount = await decide(legal)
            act = ActInput(
                player_id=player,
                hand_no=view.hand_no,
                turn=view.hand["turn"],
                action=action,
                amount=amount,
            )
            try:
                await handle.execute_update(
                    TableWorkflow.act, act, rpc_timeout=timedelta(seconds=5)
                )
            except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, RPCError):
                pass  # a timeout got there first, or no worker: read again

    await asyncio.gather(*(seat(p) for p in players))


async def test_two_workers_killed_while_timers_and_inputs_overlap(
    drill: DrillStack, drill_client: Client, drill_db: Database, drill_seed: int
) -> None:
    """Two workers on one task queue, either killed at random every few seconds, while
    decision timers fire, actions race them, level deadlines pass and every seat polls its
    view. Every tournament finishes with its money exact, and every history the drill wrote
    replays (``pytest tests/drills --drill-repeat 10`` runs it with ten seeds)."""
    print(f"two-worker drill seed {drill_seed}")
    rng = random.Random(drill_seed)
    drill.start_worker(slot=1)
    done = asyncio.Event()

    async def chaos() -> None:
        # Ten kills at most (see the drill above): every one lands while timers and inputs
        # are in flight, and the run's length no longer rides on the seed.
        while not done.is_set() and drill.kills < 10:
            await asyncio.sleep(rng.uniform(2.0, 5.0))
            slot = rng.randrange(2)
            drill.kill_worker(slot)
            await asyncio.sleep(rng.uniform(0.2, 1.5))
            drill.start_worker(slot)

    settings = {
        "seats": 3,
        "entryFee": ENTRY,
        "rakeFee": 10,
        "startingStack": SHORT_STACK,
        "actionTimeoutSeconds": 3,
        # Blinds treble every 30 s: a seat that timed out twice sits out (seed 004) and is
        # blinded away rather than playing on for minutes; level deadlines still cross hands.
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 3.0,
            "levelDurationSeconds": 30,
        },
    }

    async def one(n: int) -> TournamentView:
        tid = f"drill2-{drill_seed}-{n}"
        handle = await drill_client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(
                tournament_id=tid, name=tid, settings=settings, hand_pause_ms=500
            ),
            id=f"tournament-{tid}",
            task_queue=drill.task_queue,
        )
        players = [f"{tid}-p{i}" for i in range(3)]
        for p in players:
            await ledger.transfer(
                drill_db,
                key=f"seed:{p}",
                source=ledger.MINT,
                destination=ledger.user_account(p),
                amount=ENTRY,
            )
            await retrying(
                functools.partial(
                    handle.execute_update,
                    TournamentWorkflow.register,
                    RegisterInput(player_id=p, owner_user_id=p),
                ),
                done_code="tournament_already_registered",
            )
            await retrying(
                functools.partial(
                    handle.execute_update,
                    TournamentWorkflow.pay_entry,
                    PayEntryInput(player_id=p, amount=ENTRY),
                ),
                done_code="tournament_already_registered",
            )
        await act_slowly(
            drill_client, f"table-{tid}-1", players, random.Random(rng.random()), limit=400
        )
        return await asyncio.wait_for(handle.result(), 120)

    chaos_task = asyncio.create_task(chaos())
    try:
        views = await asyncio.gather(*(one(n) for n in range(3)))
    finally:
        done.set()
        await chaos_task
    assert drill.kills >= 4, drill.kills
    for view in views:
        await check_tournament(drill_db, view, entry_fee=ENTRY, stack=SHORT_STACK)
    report = await replay_everything(drill_client)
    print(
        f"two-worker drill seed {drill_seed}: {drill.kills} kills, "
        f"{report.replayed} histories replayed, {len(report.failures)} divergences"
    )
    report.raise_on_failure()
    assert report.replayed >= 6  # three tournaments and their tables at least
