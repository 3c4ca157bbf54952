"""Fault drills: kill -9 the worker at random moments, restart Temporal, stop PostgreSQL.

After each, every tournament completes with its invariants intact (tests/drills/invariants.py).
They are long (marked slow) and CI runs them.
"""

from __future__ import annotations

import asyncio
import functools
import random
import uuid
from collections.abc import Awaitable, Callable

import pytest
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError

from db import ledger
from db.engine import Database
from tests.drills.conftest import DrillStack
from tests.drills.invariants import check_tournament
from tests.integration.bots import play, shove
from workflows.messages import CreateTournamentInput, PayEntryInput, RegisterInput, TournamentView
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow
ENTRY, STACK = 100, 300


def settings_for(seats: int) -> dict[str, object]:
    return {
        "seats": seats, "entryFee": ENTRY, "rakeFee": 10, "startingStack": STACK,
        "actionTimeoutSeconds": 60,
        "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 600},
    }  # fmt: skip


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
    client: Client, db: Database, task_queue: str, seats: int
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    tid = f"drill-{uuid.uuid4().hex[:8]}"
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
        await ledger.transfer(db, key=f"seed:{p}", source=ledger.MINT,
                              destination=ledger.user_account(p), amount=ENTRY)  # fmt: skip
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
        # mid-hand and mid-settlement, rarely enough for the work to move on.
        while not done.is_set():
            await asyncio.sleep(rng.uniform(5.0, 9.0))
            drill.kill_worker()
            await asyncio.sleep(rng.uniform(0.1, 0.5))
            drill.start_worker()

    chaos_task = asyncio.create_task(chaos())
    try:
        handles = []
        for wave in range(4):  # 20 tournaments, five at a time
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


async def test_temporal_server_restarted_mid_tournament(
    drill: DrillStack, drill_client: Client, drill_db: Database
) -> None:
    async def restart_soon() -> None:
        await asyncio.sleep(1.5)
        drill.stop_temporal()
        await asyncio.sleep(1.0)
        drill.start_temporal()

    restart = asyncio.create_task(restart_soon())
    handle = await run_tournament(drill_client, drill_db, drill.task_queue, 3)
    await restart
    view = await asyncio.wait_for(handle.result(), 120)
    await check_tournament(drill_db, view, entry_fee=ENTRY, stack=STACK)


async def test_postgres_down_for_30_seconds(
    drill: DrillStack, drill_client: Client, drill_db: Database
) -> None:
    tid_handle = asyncio.create_task(run_tournament(drill_client, drill_db, drill.task_queue, 3))
    await asyncio.sleep(4)  # registration done and hands under way
    drill.pg.stop()
    await asyncio.sleep(30)
    drill.pg.start()
    handle = await tid_handle
    view = await asyncio.wait_for(handle.result(), 180)
    await drill_db.engine.dispose()  # drop connections that died with the server
    await check_tournament(drill_db, view, entry_fee=ENTRY, stack=STACK)
