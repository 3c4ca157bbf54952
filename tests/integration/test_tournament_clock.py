"""The tournament in skipped time: players who only time out, and the deadline-based level clock."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from sqlmodel import col, select
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from db import ledger
from db.engine import Database
from db.models import Event, Tournament
from tests.integration.helpers import start_paid_tournament
from wire.messages import CancelInput, CreateTournamentInput, RegisterInput
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow


async def test_players_who_only_time_out_are_blinded_to_the_end(
    skipping: tuple[Client, str], db: Database
) -> None:
    client, task_queue = skipping
    tid = f"clock-{uuid.uuid4().hex[:6]}"
    settings = {
        "seats": 3,
        "entryFee": 100,
        "startingStack": 200,
        "actionTimeoutSeconds": 3,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 2.0,
            "levelDurationSeconds": 60,
        },
    }
    handle = await start_paid_tournament(
        client, db, task_queue, tid, settings, hand_pause_ms=10_000
    )

    # Time skips while we wait: nobody ever acts. Bounded, so a stall fails here with what the
    # tournament was doing instead of holding CI to its limit (once seen on a loaded machine).
    try:
        final = await asyncio.wait_for(handle.result(), 240)
    except TimeoutError:
        state = await handle.query(TournamentWorkflow.state)
        kinds = [EventType.Name(e.event_type) async for e in handle.fetch_history_events()]
        raise AssertionError(
            f"no end in time: {state.state}, level {state.current_level},"
            f" {state.hands_played} hands, payouts {state.payouts}; last events {kinds[-12:]}"
        ) from None
    assert final.state == "closed"  # ended, then settled
    assert [f.place for f in final.standings] == [1, 2, 3]
    assert sum(final.stacks.values()) == 600
    assert final.current_level >= 3

    async with db.session() as s:
        events = (
            await s.exec(select(Event).where(Event.tournament_id == tid).order_by(col(Event.id)))
        ).all()
    levels = [e.payload for e in events if e.type == "blind_level_changed"]
    assert [lv["level"] for lv in levels] == list(range(1, final.current_level + 1))
    assert [lv["smallBlind"] for lv in levels[:3]] == [20, 40, 80]
    # Deadline-based: level n ends exactly n+1 durations after play started, however many
    # hands were dealt in between.
    assert final.play_start_ms is not None
    for lv in levels:
        assert lv["levelEndsAt"] == final.play_start_ms + (lv["level"] + 1) * 60_000
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 0
    assert sum(p.amount for p in final.payouts) == 300
    # The read model says when it closed (it used to stay NULL).
    async with db.session() as s:
        row = await s.get(Tournament, tid)
    assert row is not None and row.state == "closed" and row.closed_at is not None
    closed = next(
        e.payload
        for e in events
        if e.type == "tournament_state_changed" and e.payload["state"] == "closed"
    )
    assert round(row.closed_at.timestamp() * 1000) == closed["closedAt"]


async def test_an_unpaid_reserve_is_released_after_120_seconds(
    skipping: tuple[Client, str], db: Database, time_skipping_env: WorkflowEnvironment
) -> None:
    client, task_queue = skipping
    tid = f"ttl-{uuid.uuid4().hex[:6]}"
    settings = {
        "seats": 2,
        "entryFee": 100,
        "startingStack": 200,
        "actionTimeoutSeconds": 3,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 2.0,
            "levelDurationSeconds": 60,
        },
    }
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name="ttl", settings=settings),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    await handle.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id="a", owner_user_id="a")
    )
    await time_skipping_env.sleep(timedelta(seconds=100))
    assert (await handle.query(TournamentWorkflow.state)).registered_count == 1
    await time_skipping_env.sleep(timedelta(seconds=25))
    view = await handle.query(TournamentWorkflow.state)
    assert view.registered_count == 0 and view.entrants == []
    # Released: the same player may register again at once.
    again = await handle.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id="a", owner_user_id="a")
    )
    assert again.status == "reserved"
    await handle.execute_update(TournamentWorkflow.cancel, CancelInput())
    assert (await handle.result()).state == "cancelled"
