"""The payout reconciler as a Temporal Schedule (issue 28; the seed's "30s reconciler").

Before, a refused payout was retried only by a timer inside its own tournament workflow, so
the intents of a tournament that was terminated, reset or wedged were never paid. Now the
schedule ``sng-payout-reconciler`` starts a ``ReconcilerWorkflow`` every 30 seconds that pays
every unconfirmed intent older than 30 seconds through the same keyed ``pay_prize``, and
confirms it: once, whoever else drives the same intent.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import text
from temporalio.client import (
    Client,
    ScheduleActionExecutionStartWorkflow,
    ScheduleHandle,
    ScheduleOverlapPolicy,
    WorkflowHandle,
)
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from activities.persistence import PersistenceActivities
from activities.reconciler import ReconcilerActivities
from api.event_log import is_final
from core.codec import codec_for
from core.settings import Settings
from db import ledger, readstore
from db.engine import Database
from tests.integration.bots import play, shove
from tests.integration.helpers import SETTINGS, eventually, start_paid_tournament
from wire.ids import RECONCILER_SCHEDULE_ID
from wire.keys import payout_transfer_key
from wire.messages import (
    PayoutConfirmation,
    PayoutFailure,
    PayoutStatus,
    RetryPayoutsInput,
    TournamentPhase,
    TournamentView,
)
from wire.reconciler import DuePayoutsQuery, ReconcileInput, ReconcileResult
from worker import ensure_reconciler_schedule
from workflows.reconciler import ReconcilerWorkflow
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])
POOL = FEE * int(SETTINGS["seats"])
# Two paid places, 210 and 90 of the 300 pool (two players out on one hand share 2nd and 3rd).
TWO_PAID = {
    **SETTINGS,
    "prizeStructure": [{"position": 1, "percent": 70}, {"position": 2, "percent": 30}],
}
HOLD = "test:reconciler-hold"


async def _settling_with_a_short_escrow(
    client: Client, db: Database, task_queue: str, short: int
) -> tuple[str, WorkflowHandle[Any, TournamentView]]:
    """A tournament played to settlement with ``short`` chips held out of its escrow: its
    payouts that the escrow cannot cover are refused, and its own retry is an hour away."""
    tid = f"rc-{uuid.uuid4().hex[:12]}"
    handle = await start_paid_tournament(
        client, db, task_queue, tid, TWO_PAID, hand_pause_ms=0, payout_retry_seconds=3600
    )
    await ledger.transfer(
        db, key=f"hold-{tid}", source=ledger.escrow_account(tid), destination=HOLD, amount=short
    )
    players = [f"{tid}-{i}" for i in range(int(TWO_PAID["seats"]))]
    await play(client, f"table-{tid}-1", players, shove, limit=240)

    async def refused() -> TournamentView | None:
        view = await handle.query(TournamentWorkflow.state)
        waiting = view.payout_retry_at_ms is not None
        return view if view.state is TournamentPhase.SETTLING and waiting else None

    await eventually(refused, limit=90)
    return tid, handle


async def _give_back(db: Database, tid: str, amount: int) -> None:
    await ledger.transfer(
        db, key=f"back-{tid}", source=HOLD, destination=ledger.escrow_account(tid), amount=amount
    )


async def _intents(db: Database, tid: str) -> list[Any]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT id, position, destination, amount, status, confirmed_at, tx_hash"
                " FROM payout_intents WHERE tournament_id = :t ORDER BY position"
            ),
            {"t": tid},
        )
        return list(rows)


async def _all_confirmed(db: Database, tid: str) -> list[Any] | None:
    rows = await _intents(db, tid)
    done = rows and all(r.status == "confirmed" and r.confirmed_at for r in rows)
    return rows if done else None


async def _paid_exactly_once(db: Database, tid: str) -> None:
    """Every intent's destination got its amount once (each player started from 0), one
    posting per intent, the escrow is empty and one payout event per place was published."""
    rows = await _intents(db, tid)
    assert sum(r.amount for r in rows) == POOL
    async with db.engine.connect() as conn:
        for r in rows:
            assert await ledger.balance(db, r.destination) == r.amount
            legs = await conn.scalar(
                text("SELECT count(*) FROM ledger_entries WHERE posting_key = :k"),
                {"k": payout_transfer_key(r.id)},
            )
            assert legs == 2  # one posting: the escrow's leg and the winner's
        events = await conn.execute(
            text(
                "SELECT payload FROM events WHERE tournament_id = :t"
                " AND type = 'tournament_payout_settled' ORDER BY id"
            ),
            {"t": tid},
        )
        assert sorted(e.payload["position"] for e in events) == [r.position for r in rows]
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 0


async def _every_sweep_ended(client: Client, schedule: ScheduleHandle) -> list[ReconcileResult]:
    """The results of the sweeps the schedule has started so far (running or recent), each
    awaited to its run's end: a sweep confirms an intent and only then publishes its payout
    event, so its end, not the intents' status, says that both are done."""
    info = (await schedule.describe()).info
    runs = [a.action for a in info.recent_actions] + list(info.running_actions)
    ids = dict.fromkeys(
        run.workflow_id for run in runs if isinstance(run, ScheduleActionExecutionStartWorkflow)
    )
    return [
        await asyncio.wait_for(
            client.get_workflow_handle(i, result_type=ReconcileResult).result(), 60
        )
        for i in ids
    ]


async def _sweep(client: Client, task_queue: str, **given: Any) -> ReconcileResult:
    return await client.execute_workflow(
        ReconcilerWorkflow.run,
        ReconcileInput(**given),
        id=f"sweep-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def test_a_terminated_tournament_s_intents_are_paid_by_the_sweep(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    # The escrow holds the first prize only: one payout goes out, the other is refused.
    tid, handle = await _settling_with_a_short_escrow(client, db, task_queue, short=POOL - 210)
    await handle.terminate("an operator ended it mid-settlement")
    before = await _intents(db, tid)
    statuses = {r.status for r in before}
    assert statuses == {"confirmed", "failed"}, before  # some paid, some not
    # Intents younger than the sweep's age are not due yet.
    young = await ReconcilerActivities(db).due_payouts(
        DuePayoutsQuery(older_than_seconds=3600, after="", limit=1000)
    )
    assert not [p for p in young if p.tournament_id == tid]

    await _give_back(db, tid, POOL - 210)
    result = await _sweep(client, task_queue, older_than_seconds=0)
    unpaid = {r.id for r in before if r.status != "confirmed"}
    assert unpaid <= set(result.confirmed)
    assert not {r.id for r in before} & set(result.refused + result.deferred)
    assert await _all_confirmed(db, tid)
    await _paid_exactly_once(db, tid)
    # Its workflow will never close it: the sweep does, in the read model (issue 41), and the
    # closing event ends its event stream.
    assert result.closed == [tid] or tid in result.closed
    view = await readstore.read_tournament(db, tid)
    assert view is not None and view.state is TournamentPhase.CLOSED
    assert {p.status for p in view.payouts} == {PayoutStatus.CONFIRMED}
    assert view.payout_retry_at_ms is None
    async with db.engine.connect() as conn:
        state = (
            await conn.execute(text("SELECT state FROM tournaments WHERE id = :t"), {"t": tid})
        ).scalar_one()
        closing = (
            await conn.execute(
                text(
                    "SELECT type, payload FROM events WHERE tournament_id = :t"
                    " AND dedupe_key = 'state:closed'"
                ),
                {"t": tid},
            )
        ).one()
    assert state == "closed"
    assert is_final(closing.type, closing.payload)
    # A second sweep finds nothing of it to do.
    again = await _sweep(client, task_queue, older_than_seconds=0)
    assert not {r.id for r in before} & set(again.confirmed + again.refused + again.deferred)
    assert tid not in again.closed
    await _paid_exactly_once(db, tid)


async def test_the_schedule_sweeps_a_refused_payout_once_the_cause_is_fixed(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    schedule_id = f"test-reconciler-{uuid.uuid4().hex[:8]}"
    schedule = await ensure_reconciler_schedule(client, task_queue, schedule_id=schedule_id)
    try:
        described = await schedule.describe()
        assert described.schedule.policy.overlap is ScheduleOverlapPolicy.SKIP
        assert [i.every for i in described.schedule.spec.intervals] == [timedelta(seconds=30)]
        # Only the test's triggers sweep (a paused schedule still takes them): a tick of its
        # own could be halfway through a sweep, its intents back at pending, when the test
        # reads them as failed.
        await schedule.pause(note="the test triggers every sweep itself")

        tid, handle = await _settling_with_a_short_escrow(client, db, task_queue, short=POOL)
        rows = await _intents(db, tid)
        assert {r.status for r in rows} == {"failed"}

        async def old_enough() -> bool | None:
            async with db.engine.connect() as conn:
                young = await conn.scalar(
                    text(
                        "SELECT count(*) FROM payout_intents WHERE tournament_id = :t"
                        " AND created_at >= now() - interval '31 seconds'"
                    ),
                    {"t": tid},
                )
            return True if young == 0 else None

        await eventually(old_enough, limit=60)

        async def swept(ids: set[str]) -> ReconcileResult | None:
            """The result of the newest sweep the schedule started that drove ``ids``."""
            info = (await schedule.describe()).info
            for done in reversed(info.recent_actions):
                run = client.get_workflow_handle(
                    getattr(done.action, "workflow_id", ""), result_type=ReconcileResult
                )
                assert run.id.startswith(f"{schedule_id}-")  # each run: the id and its tick
                try:
                    result = await asyncio.wait_for(run.result(), 30)
                except Exception:  # still running, or not a sweep of ours
                    continue
                if ids <= set(result.confirmed + result.refused + result.deferred):
                    return result
            return None

        ids = {r.id for r in rows}
        # Still short: the sweep is refused too, and says why on the intents.
        await schedule.trigger()
        refused = await eventually(lambda: swept(ids), limit=60)
        assert ids <= set(refused.refused), refused
        assert {r.status for r in await _intents(db, tid)} == {"failed"}

        # Fixed: the next sweep pays and confirms them all; the tournament's own timer has not
        # run.
        await _give_back(db, tid, POOL)
        await schedule.trigger()
        await eventually(lambda: _all_confirmed(db, tid), limit=60)
        # Confirmed is not the sweep's end: it publishes each place's payout event after
        # confirming it (a CI run checked in between and saw one event of three). Every sweep
        # the schedule started by now, the one or ones that confirmed them among them, is
        # awaited to its end first.
        results = await _every_sweep_ended(client, schedule)
        assert ids <= {i for r in results for i in r.confirmed}, results
        await _paid_exactly_once(db, tid)
        assert (await handle.query(TournamentWorkflow.state)).state is TournamentPhase.SETTLING

        # The tournament drives the same intents again (its retry): nothing moves twice.
        await handle.execute_update(TournamentWorkflow.retry_payouts, RetryPayoutsInput())

        async def closed() -> TournamentView | None:
            view = await handle.query(TournamentWorkflow.state)
            return view if view.state is TournamentPhase.CLOSED else None

        view = await eventually(closed, limit=60)
        assert all(p.status is PayoutStatus.CONFIRMED for p in view.payouts)
        await _paid_exactly_once(db, tid)
    finally:
        await schedule.delete()


async def test_the_sweep_and_the_tournament_racing_for_one_intent_pay_it_once(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    tid, handle = await _settling_with_a_short_escrow(client, db, task_queue, short=POOL)
    await _give_back(db, tid, POOL)
    # Both drivers at once, and two sweeps besides: every one pays the same keyed intents.
    await asyncio.gather(
        handle.execute_update(TournamentWorkflow.retry_payouts, RetryPayoutsInput()),
        _sweep(client, task_queue, older_than_seconds=0),
        _sweep(client, task_queue, older_than_seconds=0),
    )

    async def closed() -> TournamentView | None:
        view = await handle.query(TournamentWorkflow.state)
        return view if view.state is TournamentPhase.CLOSED else None

    await eventually(closed, limit=60)
    assert await _all_confirmed(db, tid)
    await _paid_exactly_once(db, tid)


async def test_the_schedule_is_ensured_idempotently_and_stays_paused(client: Client) -> None:
    """Every worker ensures the schedule at startup: a second one updates it in place and
    leaves an operator's pause (and its note) alone."""
    schedule_id = f"test-reconciler-{uuid.uuid4().hex[:8]}"
    schedule = await ensure_reconciler_schedule(client, "tq-a", schedule_id=schedule_id)
    try:
        await schedule.pause(note="paused by the on-call: chain incident")
        await ensure_reconciler_schedule(client, "tq-b", schedule_id=schedule_id)
        described = await schedule.describe()
        assert described.schedule.state.paused
        assert described.schedule.state.note == "paused by the on-call: chain incident"
        assert getattr(described.schedule.action, "task_queue", None) == "tq-b"
        assert described.schedule.policy.overlap is ScheduleOverlapPolicy.SKIP
    finally:
        await schedule.delete()


async def test_a_refusal_seen_late_never_undoes_a_confirmed_payout(
    db: Database, settings: Settings
) -> None:
    """The tournament and the sweep both drive an intent: a refusal one of them saw must
    not turn the other's confirmed payment back into ``failed``."""
    tid = f"rc-{uuid.uuid4().hex[:12]}"
    intent = f"{tid}:payout:1"
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO tournaments (id, name, kind, seats, entry_fee, rake_fee,"
                " starting_stack, settings, state, workflow_id, registered_count,"
                " current_level, created_at, updated_at) VALUES (:t, :t, 'sng', 3, 100, 0,"
                " 1500, '{}', 'settling', :t, 3, 1, now(), now())"
            ),
            {"t": tid},
        )
        await conn.execute(
            text(
                "INSERT INTO payout_intents (id, tournament_id, position, player_id, amount,"
                " destination, status, created_at) VALUES (:i, :t, 1, 'p', 10, 'user:p',"
                " 'pending', now())"
            ),
            {"i": intent, "t": tid},
        )
    persistence = PersistenceActivities(db, codec_for(settings))
    await persistence.confirm_payout(
        PayoutConfirmation(intent_id=intent, tx_hash=None, reference="ledger:x")
    )
    await persistence.fail_payout(PayoutFailure(intent_id=intent, reason="escrow short"))
    async with db.engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT status, failure_reason, confirmed_at FROM payout_intents WHERE id = :i"
                ),
                {"i": intent},
            )
        ).one()
    assert (row.status, row.failure_reason) == ("confirmed", None)
    assert row.confirmed_at is not None


async def test_sng_schedules_creates_and_shows_the_schedule(
    client: Client, worker: Worker, settings: Settings
) -> None:
    """The operator's command: creates the schedule under its production id (twice: the
    second updates it), and says whether it runs."""
    env = {
        **os.environ,
        "SNG_ENV": "test",
        "SNG_TEMPORAL_ADDRESS": settings.temporal_address,
        "SNG_TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
    }
    try:
        for _ in range(2):
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sng.cli",
                "schedules",
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            out, _ = await proc.communicate()
            shown = out.decode()
            assert proc.returncode == 0, shown
            assert shown.startswith(f"{RECONCILER_SCHEDULE_ID}: a ReconcilerWorkflow every 30s")
            assert f"on {settings.temporal_task_queue}, running" in shown, shown
            assert "next run" in shown, shown
    finally:
        await client.get_schedule_handle(RECONCILER_SCHEDULE_ID).delete()


async def _orphan(db: Database, tid: str, *, confirmed: list[int], rake_total: int = 0) -> None:
    """A tournament the store shows settling (no workflow: its history is gone), two paid
    places in its view, an intent written and confirmed for each place in ``confirmed``."""
    payouts = [
        {
            "intent_id": f"{tid}:payout:{n}",
            "position": n,
            "player_id": f"p{n}",
            "amount": 100,
            "destination": f"user:p{n}",
            "status": "failed",
        }
        for n in (1, 2)
    ]
    view = {
        "tournament_id": tid,
        "name": tid,
        "state": "settling",
        "kind": "open",
        "seats": 2,
        "entry_fee": 100,
        "starting_stack": 1000,
        "registered_count": 2,
        "entrants": [],
        "version": 7,
        "payouts": payouts,
        "rake_total": rake_total,
    }
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO tournaments (id, name, kind, seats, entry_fee, rake_fee,"
                " starting_stack, settings, state, workflow_id, registered_count, current_level,"
                " created_at, updated_at) VALUES (:t, :t, 'open', 2, 100, 0, 1000, '{}',"
                " 'settling', :w, 2, 0, now(), now())"
            ),
            {"t": tid, "w": f"tournament-{tid}"},
        )
        await conn.execute(
            text(
                "INSERT INTO read_states (key, kind, version, public, private, updated_at)"
                " VALUES (:k, 'tournament', 7, CAST(:v AS jsonb), '{}', now())"
            ),
            {"k": f"tournament-{tid}", "v": json.dumps({"view": view})},
        )
        for n in confirmed:
            await conn.execute(
                text(
                    "INSERT INTO payout_intents (id, tournament_id, position, player_id, amount,"
                    " destination, status, tx_hash, created_at, confirmed_at) VALUES"
                    " (:i, :t, :n, :p, 100, :d, 'confirmed', NULL, now(), now())"
                ),
                {"i": f"{tid}:payout:{n}", "t": tid, "n": n, "p": f"p{n}", "d": f"user:p{n}"},
            )


async def test_the_sweep_leaves_settling_a_tournament_with_a_place_or_a_rake_still_owed(
    client: Client, db: Database
) -> None:
    """Every intent written is confirmed, but one place has none (its wallet is not known,
    so settlement wrote none), or the house's rake is not in: not settled, so not closed."""
    acts = ReconcilerActivities(db)
    env = ActivityEnvironment(client=client)
    place_owed = f"owed-{uuid.uuid4().hex[:6]}"
    await _orphan(db, place_owed, confirmed=[1])
    rake_owed = f"rake-{uuid.uuid4().hex[:6]}"
    await _orphan(db, rake_owed, confirmed=[1, 2], rake_total=20)
    paid = f"paid-{uuid.uuid4().hex[:6]}"
    await _orphan(db, paid, confirmed=[1, 2])
    closed = await env.run(acts.close_orphaned_settlements, 1000)
    assert paid in closed
    assert place_owed not in closed and rake_owed not in closed
    async with db.engine.connect() as conn:
        states = dict(
            (
                await conn.execute(
                    text("SELECT id, state FROM tournaments WHERE id IN (:a, :b, :c)"),
                    {"a": place_owed, "b": rake_owed, "c": paid},
                )
            ).all()
        )
    assert states == {place_owed: "settling", rake_owed: "settling", paid: "closed"}
