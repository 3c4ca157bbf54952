"""Failed payouts (security review, money): a definite refusal left the tournament in
``settling`` for good.

A payout refused for a definite reason (here: the escrow was short when it ran) marked its
intent ``failed`` and the workflow completed, still ``settling``, with no way to pay the winner.
Now the tournament stays open with the reason visible and a retry time; the reconciler tries
again on a backoff schedule, an operator can re-drive at once (admin JSON route, and a button
on the admin page), and each intent still pays exactly once.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from core.settings import Settings
from db import ledger
from db.engine import Database
from tests.integration.bots import play, shove
from tests.integration.helpers import SETTINGS, admin, eventually, start_paid_tournament
from wire.messages import (
    PayoutStatus,
    TournamentPhase,
    TournamentView,
)
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])
HOLD = "test:held-out-of-escrow"


async def _paid_then_escrow_drained(
    client: Client,
    db: Database,
    task_queue: str,
    retry_seconds: int,
    settings: dict[str, Any] = SETTINGS,
) -> tuple[str, WorkflowHandle[Any, TournamentView]]:
    tid = f"po-{uuid.uuid4().hex[:12]}"
    handle = await start_paid_tournament(
        client, db, task_queue, tid, settings, hand_pause_ms=0, payout_retry_seconds=retry_seconds
    )
    players = [f"{tid}-{i}" for i in range(int(SETTINGS["seats"]))]
    # The escrow goes short before the payouts run (a bug elsewhere, a manual fix gone wrong).
    await ledger.transfer(
        db, key=f"drain-{tid}", source=ledger.escrow_account(tid), destination=HOLD, amount=3 * FEE
    )
    await play(client, f"table-{tid}-1", players, shove, limit=240)
    return tid, handle


async def _refused(handle: WorkflowHandle[Any, TournamentView]) -> TournamentView | None:
    """Settling, a payout refused, and the next try scheduled. (While the other payouts of
    the same round still run, a refused one is shown before the retry time is set.)"""
    view = await handle.query(TournamentWorkflow.state)
    failed = [p for p in view.payouts if p.status is PayoutStatus.FAILED] or view.rake_failure
    waiting = view.payout_retry_at_ms is not None
    return view if view.state is TournamentPhase.SETTLING and failed and waiting else None


async def _closed(handle: WorkflowHandle[Any, TournamentView]) -> TournamentView | None:
    view = await handle.query(TournamentWorkflow.state)
    return view if view.state is TournamentPhase.CLOSED else None


async def _paid_once(db: Database, tid: str, view: TournamentView) -> None:
    for payout in view.payouts:
        assert payout.status is PayoutStatus.CONFIRMED
        assert await ledger.balance(db, payout.destination) == payout.amount
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 0


async def test_the_reconciler_pays_a_refused_payout_once_the_cause_is_fixed(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    tid, handle = await _paid_then_escrow_drained(client, db, task_queue, retry_seconds=2)
    refused = await eventually(lambda: _refused(handle), limit=60)
    reason = next(p.failure_reason for p in refused.payouts if p.failure_reason)
    assert reason and "insufficient" in reason.lower()
    # Still short at the next try or two: still settling, the reason still shown.
    await eventually(lambda: _refused(handle), limit=10)
    await ledger.transfer(
        db,
        key=f"restore-{tid}",
        source=HOLD,
        destination=ledger.escrow_account(tid),
        amount=3 * FEE,
    )
    closed = await eventually(lambda: _closed(handle), limit=60)
    await _paid_once(db, tid, closed)


async def test_an_operator_re_drives_refused_payouts_from_the_admin_api(
    api_url: str,
    settings: Settings,
    client: Client,
    worker: Worker,
    task_queue: str,
    db: Database,
) -> None:
    tid, handle = await _paid_then_escrow_drained(client, db, task_queue, retry_seconds=3600)
    await eventually(lambda: _refused(handle), limit=60)
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        path = f"/admin/tournaments/{tid}/payouts/retry"
        assert (await http.post(path)).status_code == 401  # operators only
        # Retrying before the cause is fixed is refused again, visibly.
        r = await http.post(path, headers=admin(settings))
        assert r.status_code == 200, r.text
        await eventually(lambda: _refused(handle), limit=30)
        await ledger.transfer(
            db,
            key=f"restore-{tid}",
            source=HOLD,
            destination=ledger.escrow_account(tid),
            amount=3 * FEE,
        )
        r = await http.post(path, headers=admin(settings))
        assert r.status_code == 200, r.text
        closed = await eventually(lambda: _closed(handle), limit=30)
        await _paid_once(db, tid, closed)
        r = await http.post(path, headers=admin(settings))
        assert r.status_code == 409 and r.json()["code"] == "invalid_state", r.text


async def test_a_refused_rake_waits_for_the_reconciler_like_a_payout(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    """The house's rake is a money step like a payout: a refusal used to fail the workflow
    (the tournament stuck in ``settling`` with its escrow); now it waits and retries."""
    raked = {**SETTINGS, "rakeFee": 10}
    tid, handle = await _paid_then_escrow_drained(client, db, task_queue, 2, raked)
    refused = await eventually(lambda: _refused(handle), limit=60)
    assert refused.rake_failure and "insufficient" in refused.rake_failure.lower()
    house = await ledger.balance(db, ledger.HOUSE)
    await ledger.transfer(
        db,
        key=f"restore-{tid}",
        source=HOLD,
        destination=ledger.escrow_account(tid),
        amount=3 * FEE,
    )
    closed = await eventually(lambda: _closed(handle), limit=60)
    assert closed.rake_failure is None
    assert await ledger.balance(db, ledger.HOUSE) - house == 3 * 10  # once
    await _paid_once(db, tid, closed)
