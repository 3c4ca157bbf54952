"""L8 (security review): a reserve past its time could still be paid.

``_verify_pay`` ignored ``reserved_until_ms``: between a reserve's deadline and the moment the
workflow's alarm released it, a pay went through, so a squatter could hold a seat unpaid for
its whole time and pay after it, while others had been turned away from a full table. Now a
pay on an expired reserve is refused in the validator. Forced deterministically: no worker
runs while the deadline passes, so the pay and the fired alarm reach one workflow task (the
SDK runs an Update's validator before it resolves timers).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from db import ledger
from db.engine import Database
from tests.integration.helpers import SETTINGS
from wire.messages import CreateTournamentInput, PayEntryInput, RegisterInput
from workflows.tournament import TournamentWorkflow


async def test_a_reserve_past_its_time_cannot_be_paid(client: Client, db: Database) -> None:
    from worker import build_worker

    task_queue, tid = f"tq-{uuid.uuid4().hex[:8]}", f"l8-{uuid.uuid4().hex[:8]}"
    user = f"{tid}-a"
    await ledger.transfer(
        db,
        key=f"seed-{user}",
        source=ledger.MINT,
        destination=ledger.user_account(user),
        amount=100,
    )
    async with build_worker(client, db, task_queue):
        handle = await client.start_workflow(
            TournamentWorkflow.run,
            CreateTournamentInput(
                tournament_id=tid, name=tid, settings=SETTINGS, reserve_seconds=2
            ),
            id=f"tournament-{tid}",
            task_queue=task_queue,
        )
        await handle.execute_update(
            TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
        )
    await asyncio.sleep(3)  # the deadline passes with no worker to run the alarm
    pay = asyncio.create_task(
        handle.execute_update(
            TournamentWorkflow.pay_entry, PayEntryInput(player_id=user, amount=100)
        )
    )
    await asyncio.sleep(1)
    async with build_worker(client, db, task_queue):
        with pytest.raises(WorkflowUpdateFailedError) as info:
            await asyncio.wait_for(pay, 60)
        assert isinstance(info.value.cause, ApplicationError)
        assert info.value.cause.type == "tournament_not_registered", info.value.cause
        assert await ledger.balance(db, ledger.user_account(user)) == 100
        await handle.terminate("test done")
