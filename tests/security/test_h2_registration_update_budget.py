"""H2 (security review): register/leave cycles spend a registering tournament's Update budget.

The attack: free accounts register and leave over and over. Registration never continued-as-
new, so after Temporal's 2,000 Updates in one run every Update was refused, the operator's
cancel included, and the paid entrants' fees were stranded in escrow. Now a player may
register at most five times per tournament and waits a cooldown (10 s by default) after
leaving before registering again, registration continues-as-new every
``updates_per_run`` Updates (500 by default; refusing new ones with a retryable "try again"
for the moment it hands over), and after the cycles a cancel still refunds everyone.

The review's figure is 1,500 cycles (3,000 Updates, past Temporal's 2,000 per run):
``pytest tests/security -k h2 --h2-cycles 1500`` runs it (about five minutes here). By default
60 cycles (120 Updates) against a 40-Update run budget rotate the run three times: the same
property, as the budget is per run, in the time CI has.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from core.settings import Settings
from db import ledger, readstore
from db.engine import Database
from domain.registration import MAX_ENTRIES
from tests.integration.helpers import SETTINGS, create, player
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    PayEntryInput,
    RegisterInput,
    TournamentPhase,
    UnregisterInput,
)
from workflows.tournament import TournamentWorkflow

SEATS = 6
FEE = int(SETTINGS["entryFee"])


async def _until_taken(call: object) -> None:
    """Send an Update until it is taken: a hand-over to a fresh run answers 'try again'."""
    while True:
        try:
            await call()  # type: ignore[operator]
            return
        except WorkflowUpdateFailedError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.type == "temporarily_unavailable":
                await asyncio.sleep(0.05)
                continue
            raise


async def test_register_leave_cycles_cannot_freeze_registration_or_its_refunds(
    client: Client, worker: Worker, task_queue: str, db: Database, request: pytest.FixtureRequest
) -> None:
    cycles = int(request.config.getoption("--h2-cycles"))
    budget = 500 if cycles >= 1_000 else 40
    tid = f"h2-{uuid.uuid4().hex[:12]}"
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid,
            name=tid,
            settings={**SETTINGS, "seats": SEATS},
            updates_per_run=budget,
            reregister_cooldown_seconds=0,  # the cycles test the budget; the cooldown below
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    first_run = handle.result_run_id
    paid = [f"{tid}-paid-{n}" for n in range(2)]
    for user in paid:
        await ledger.transfer(
            db,
            key=f"seed-{user}",
            source=ledger.MINT,
            destination=ledger.user_account(user),
            amount=FEE,
        )
        await handle.execute_update(
            TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
        )
        await handle.execute_update(
            TournamentWorkflow.pay_entry, PayEntryInput(player_id=user, amount=FEE)
        )

    # The attack: free accounts cycling through the four seats left, MAX_ENTRIES times each.
    spammers = [f"{tid}-s{n}" for n in range(cycles // MAX_ENTRIES)]
    lanes = [spammers[n :: SEATS - len(paid)] for n in range(SEATS - len(paid))]

    async def lane(users: list[str]) -> None:
        for user in users:
            for _ in range(MAX_ENTRIES):
                await _until_taken(
                    lambda u=user: handle.execute_update(
                        TournamentWorkflow.register, RegisterInput(player_id=u, owner_user_id=u)
                    )
                )
                await _until_taken(
                    lambda u=user: handle.execute_update(
                        TournamentWorkflow.unregister, UnregisterInput(player_id=u)
                    )
                )
            # A sixth registration is refused with its code, before it reaches history.
            try:
                await handle.execute_update(
                    TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
                )
                raise AssertionError("a sixth registration was accepted")
            except WorkflowUpdateFailedError as err:
                assert isinstance(err.cause, ApplicationError)
                assert err.cause.type in (
                    "tournament_registration_limit",
                    "temporarily_unavailable",
                )

    await asyncio.gather(*(lane(users) for users in lanes))

    # Many runs later, the operator's cancel still works and refunds both paid entrants.
    view = None

    async def cancel() -> None:
        nonlocal view
        view = await handle.execute_update(TournamentWorkflow.cancel, CancelInput(reason="test"))

    await _until_taken(cancel)
    assert view is not None and view.state is TournamentPhase.CANCELLED
    # The read model, written in parts across every run (each hands over the entrants it had
    # not published), serves the workflow's view: order, released entries and all.
    assert await readstore.read_tournament(db, tid) == view
    for user in paid:
        assert await ledger.balance(db, ledger.user_account(user)) == FEE
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 0
    runs, run_id, earliest = 0, (await handle.describe()).run_id, None
    while run_id:  # back through continue-as-new to the first run
        runs, earliest = runs + 1, run_id
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        run_id = history.events[
            0
        ].workflow_execution_started_event_attributes.continued_execution_run_id
    assert earliest == first_run
    assert runs >= 2 * cycles // budget, f"{runs} runs for {2 * cycles} Updates"


async def test_a_player_who_just_left_waits_before_registering_again(
    api_url: str, settings: Settings, client: Client, task_queue: str
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        user = player(settings, f"h2c-{uuid.uuid4().hex[:6]}")
        # Leave and come straight back once (the seed's promise), then leave again.
        for path in ("register", "leave", "register", "leave"):
            r = await http.post(f"/tournaments/{tid}/{path}", json={}, headers=user)
            assert r.status_code == 200, r.text
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=user)
        assert r.status_code == 429, r.text
        assert r.json()["code"] == "tournament_registration_cooldown", r.text
        assert 1 <= int(r.headers["retry-after"]) <= 10
    # And once the cooldown has passed, the same call is taken (a 1 s cooldown here).
    tid = f"h2c-{uuid.uuid4().hex[:12]}"
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid, name=tid, settings=SETTINGS, reregister_cooldown_seconds=1
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    join = RegisterInput(player_id="p", owner_user_id="p")
    for _ in range(2):
        await handle.execute_update(TournamentWorkflow.register, join)
        await handle.execute_update(TournamentWorkflow.unregister, UnregisterInput(player_id="p"))
    with pytest.raises(WorkflowUpdateFailedError) as info:
        await handle.execute_update(TournamentWorkflow.register, join)
    assert isinstance(info.value.cause, ApplicationError)
    assert info.value.cause.type == "tournament_registration_cooldown"
    await asyncio.sleep(1.2)
    result = await handle.execute_update(TournamentWorkflow.register, join)
    assert result.status.value == "reserved"
    # The next wait is twice as long.
    await handle.execute_update(TournamentWorkflow.unregister, UnregisterInput(player_id="p"))
    await asyncio.sleep(1.2)
    with pytest.raises(WorkflowUpdateFailedError):
        await handle.execute_update(TournamentWorkflow.register, join)
    await asyncio.sleep(1.0)
    await handle.execute_update(TournamentWorkflow.register, join)
    await handle.terminate("test done")
