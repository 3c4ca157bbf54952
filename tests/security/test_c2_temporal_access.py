"""C2 (security review): whoever reaches the Temporal frontend must not be able to move money.

Three attacks, each against the real dev server and worker:
- start a tournament with plaintext input (the ``temporal`` CLI, no codec key) whose carried
  state is "ended, the attacker won": on the reviewed main the worker paid the prize out of
  the victim tournament's escrow;
- the same carried state sealed with the key (an insider, or a bug) on a fresh start;
- forged ``hand_completed`` / ``table_finished`` signals to a running tournament.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from db import ledger
from db.engine import Database
from tests.integration.helpers import SETTINGS, start_paid_tournament
from wire.messages import (
    CreateTournamentInput,
    Placing,
    TournamentPhase,
    TournamentState,
    TournamentView,
)
from wire.table_messages import HandReport, TableResult
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])


async def _victim_escrow(db: Database, tid: str) -> None:
    """The victim tournament's escrow holds three paid entries."""
    await ledger.transfer(
        db,
        key=f"test-escrow-{tid}",
        source=ledger.MINT,
        destination=ledger.escrow_account(tid),
        amount=3 * FEE,
    )


def _forged(tid: str, thief: str) -> CreateTournamentInput:
    carry = TournamentState(
        tournament_id=tid,
        name="forged",
        phase=TournamentPhase.ENDED,
        field_size=3,
        finishes=[Placing(player_id=thief, place=1, rank=1)],
    )
    return CreateTournamentInput(tournament_id=tid, name="forged", settings=SETTINGS, carry=carry)


async def _scheduled_activities(client: Client, workflow_id: str) -> int:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return sum(e.HasField("activity_task_scheduled_event_attributes") for e in history.events)


async def test_a_plaintext_start_that_carries_a_win_never_runs(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    # The victim: a real tournament, paid, its three fees in escrow.
    tid, thief = f"c2p-{uuid.uuid4().hex[:12]}", f"thief-{uuid.uuid4().hex[:8]}"
    slow = {**SETTINGS, "actionTimeoutSeconds": 120}
    victim = await start_paid_tournament(client, db, task_queue, tid, slow, hand_pause_ms=0)
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 3 * FEE
    # What `temporal workflow start --input '{...}'` sends: JSON, no codec, naming the
    # victim's tournament in a carried state that says the thief won.
    plain = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=dataclasses.replace(pydantic_data_converter),
    )
    workflow_id = f"tournament-{tid}-x"
    handle = await plain.start_workflow(
        "TournamentWorkflow", _forged(tid, thief), id=workflow_id, task_queue=task_queue
    )
    await asyncio.sleep(4)  # the worker has had its chances (it refuses the task each time)
    assert await _scheduled_activities(client, workflow_id) == 0
    history = await handle.fetch_history()
    failed = [e for e in history.events if e.HasField("workflow_task_failed_event_attributes")]
    assert failed, "the worker refused the plaintext input (a failed workflow task)"
    await handle.terminate("test: forged start")
    assert await ledger.balance(db, ledger.user_account(thief)) == 0
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 3 * FEE
    await victim.terminate("test done")


async def test_a_sealed_carry_or_a_borrowed_id_on_a_fresh_start_is_refused(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    tid, thief = f"c2s-{uuid.uuid4().hex}", f"thief-{uuid.uuid4().hex[:8]}"
    await _victim_escrow(db, tid)
    borrowed = CreateTournamentInput(tournament_id=tid, name="borrowed", settings=SETTINGS)
    for workflow_id, inp, why in (
        (f"tournament-{tid}", _forged(tid, thief), "continue-as-new"),
        (f"tournament-{tid}-x", borrowed, f"runs only as workflow tournament-{tid}"),
    ):
        handle = await client.start_workflow(
            TournamentWorkflow.run, inp, id=workflow_id, task_queue=task_queue
        )
        try:
            await asyncio.wait_for(handle.result(), 20)
            raise AssertionError("a forged start ran to completion")
        except WorkflowFailureError as err:
            assert why in str(err.cause)
        assert await _scheduled_activities(client, workflow_id) == 0
    assert await ledger.balance(db, ledger.user_account(thief)) == 0
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 3 * FEE


async def test_forged_table_reports_are_ignored(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    tid = f"c2r-{uuid.uuid4().hex[:12]}"
    slow = {**SETTINGS, "actionTimeoutSeconds": 120}  # nobody acts: the tournament stays put
    handle = await start_paid_tournament(client, db, task_queue, tid, slow, hand_pause_ms=0)

    async def playing() -> TournamentView:
        while True:
            view = await handle.query(TournamentWorkflow.state)
            if view.state is TournamentPhase.PLAYING:
                return view
            await asyncio.sleep(0.1)

    before = await asyncio.wait_for(playing(), 30)
    thief = f"{tid}-0"
    table_id = f"table-{tid}-1"
    # Seat 0 "won" every chip in hand 1, and the table "finished".
    total = sum(before.stacks.values())
    report = HandReport(
        table_id=table_id,
        hand_no=1,
        level=0,
        record={"hand_no": 1},
        busted=[],
        stacks_after={0: total, 1: 0, 2: 0},
        auto_folds=0,
        secret="guess",
    )
    await handle.signal(TournamentWorkflow.hand_completed, report)
    await handle.signal(
        TournamentWorkflow.table_finished,
        TableResult(table_id=table_id, hands_played=1, stacks={0: total}, auto_folds=0),
    )
    await asyncio.sleep(2)
    after = await handle.query(TournamentWorkflow.state)
    assert after.state is TournamentPhase.PLAYING and after.stacks == before.stacks, after
    assert after.hands_played == before.hands_played
    assert await ledger.balance(db, ledger.user_account(thief)) == 0
    await handle.terminate("test done")
