"""N1 (security review 2026-12-03): a sealed payload copied out of a workflow's own history and
sent back into that same workflow must change nothing.

Two attacks, each by someone who reaches the Temporal frontend and has no codec key:
- take a real, sealed ``hand_completed`` report out of a playing tournament's history and
  signal it again over raw gRPC. On the reviewed main the tournament took it: ``handsPlayed``
  went back to 1 and the stacks reverted (and a replayed bust placed a player twice, so two
  places were paid from one pool);
- poll the tournament's task queue as a worker and answer a second entrant's fee with the
  sealed receipt of the first entrant's paid fee. On the reviewed main the entry was marked
  PAID with no money moved (the workflow never looked at the receipt).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

from temporalio.api.common.v1 import Payloads, WorkflowExecution
from temporalio.api.enums.v1 import UpdateWorkflowExecutionLifecycleStage
from temporalio.api.failure.v1 import ApplicationFailureInfo, Failure
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.update.v1 import Request as UpdateRequest
from temporalio.api.update.v1 import WaitPolicy
from temporalio.api.workflowservice.v1 import (
    PollActivityTaskQueueRequest,
    RespondActivityTaskCompletedRequest,
    RespondActivityTaskFailedRequest,
    SignalWorkflowExecutionRequest,
    UpdateWorkflowExecutionRequest,
)
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from db import ledger
from db.engine import Database
from tests.integration.helpers import SETTINGS, eventually, start_paid_tournament
from wire.ids import table_workflow_id
from wire.messages import (
    CreateTournamentInput,
    EntrantStatus,
    PayEntryInput,
    RegisterInput,
    TournamentPhase,
    TournamentView,
    UnregisterInput,
)
from worker import build_worker
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])


async def _signals(handle: WorkflowHandle[Any, Any], name: str) -> list[Payloads]:
    """The sealed inputs of every ``name`` signal in the workflow's history, in order."""
    found = []
    async for event in handle.fetch_history_events():
        if event.HasField("workflow_execution_signaled_event_attributes"):
            attrs = event.workflow_execution_signaled_event_attributes
            if attrs.signal_name == name:
                found.append(attrs.input)
    return found


async def _raw_signal(client: Client, workflow_id: str, name: str, args: Payloads) -> None:
    """What a keyless client sends: the sealed bytes as they are, no data converter."""
    await client.workflow_service.signal_workflow_execution(
        SignalWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id),
            signal_name=name,
            input=args,
            identity="replayed-report",
            request_id=uuid.uuid4().hex,
        )
    )


async def test_a_sealed_hand_report_sent_again_changes_nothing(
    client: Client, task_queue: str, db: Database
) -> None:
    tid = f"n1r-{uuid.uuid4().hex[:12]}"
    quick = {**SETTINGS, "actionTimeoutSeconds": 3}  # nobody acts: timeouts deal the hands
    async with build_worker(client, db, task_queue):
        handle = await start_paid_tournament(client, db, task_queue, tid, quick, hand_pause_ms=0)

        async def three_hands() -> TournamentView | None:
            view = await handle.query(TournamentWorkflow.state)
            return view if view.hands_played >= 3 else None

        await eventually(three_hands, 120)
        # The table stops reporting, so what follows is the replay alone.
        await client.get_workflow_handle(table_workflow_id(tid)).terminate("test: quiet table")
        await asyncio.sleep(1)
        before = await handle.query(TournamentWorkflow.state)
        reports = await _signals(handle, "hand_completed")
        assert len(reports) >= 3
        # The last hand again, then the first two (on the reviewed main: back to hand 2).
        for sealed in (reports[-1], reports[0], reports[1]):
            assert sealed.payloads[0].metadata["encoding"] == b"binary/encrypted"
            await _raw_signal(client, handle.id, "hand_completed", sealed)
        await asyncio.sleep(3)
        after = await handle.query(TournamentWorkflow.state)
        assert after.state is TournamentPhase.PLAYING
        assert after.hands_played == before.hands_played, (before.hands_played, after)
        assert after.stacks == before.stacks
        assert after.standings == before.standings
        await handle.terminate("test done")


async def _answer_from_history(
    client: Client, task_queue: str, handle: WorkflowHandle[Any, Any], stop: asyncio.Event
) -> list[str]:
    """A rogue poller without the key: it takes the queue's activity tasks and answers each
    with a sealed result that an earlier activity of the same type left in this workflow's
    history (for ``collect_entry``: the first entrant's receipt)."""
    answered: list[str] = []
    while not stop.is_set():
        try:
            task = await client.workflow_service.poll_activity_task_queue(
                PollActivityTaskQueueRequest(
                    namespace=client.namespace,
                    task_queue=TaskQueue(name=task_queue),
                    identity="rogue-poller",
                ),
                timeout=timedelta(seconds=5),
            )
        except RPCError:
            continue
        if not task.task_token:
            continue
        kind = task.activity_type.name
        scheduled: dict[int, str] = {}
        lifted: Payloads | None = None
        async for event in handle.fetch_history_events():
            if event.HasField("activity_task_scheduled_event_attributes"):
                scheduled[event.event_id] = (
                    event.activity_task_scheduled_event_attributes.activity_type.name
                )
            if event.HasField("activity_task_completed_event_attributes"):
                done = event.activity_task_completed_event_attributes
                if scheduled.get(done.scheduled_event_id) == kind:
                    lifted = done.result
        if lifted is None:
            await client.workflow_service.respond_activity_task_failed(
                RespondActivityTaskFailedRequest(
                    namespace=client.namespace,
                    task_token=task.task_token,
                    failure=Failure(
                        message="rogue: nothing to lift",
                        application_failure_info=ApplicationFailureInfo(type="rogue"),
                    ),
                    identity="rogue-poller",
                )
            )
            continue
        await client.workflow_service.respond_activity_task_completed(
            RespondActivityTaskCompletedRequest(
                namespace=client.namespace,
                task_token=task.task_token,
                result=lifted,
                identity="rogue-poller",
            )
        )
        answered.append(kind)
    return answered


async def test_a_lifted_receipt_pays_no_entry(
    client: Client, task_queue: str, db: Database
) -> None:
    tid = f"n1m-{uuid.uuid4().hex[:12]}"
    first, second = f"{tid}-a", f"{tid}-b"
    for user in (first, second):
        await ledger.transfer(
            db,
            key=f"seed-{user}",
            source=ledger.MINT,
            destination=ledger.user_account(user),
            amount=FEE,
        )
    async with build_worker(client, db, task_queue):
        handle = await _registering(client, task_queue, tid)
        for user in (first, second):
            await handle.execute_update(
                TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
            )
        await handle.execute_update(
            TournamentWorkflow.pay_entry, PayEntryInput(player_id=first, amount=FEE)
        )
    assert await ledger.balance(db, ledger.escrow_account(tid)) == FEE

    # From here on only the rogue answers this queue's activities.
    stop = asyncio.Event()
    async with build_worker(client, db, task_queue, no_remote_activities=True):
        rogue = asyncio.create_task(_answer_from_history(client, task_queue, handle, stop))
        pay = asyncio.create_task(
            handle.execute_update(
                TournamentWorkflow.pay_entry, PayEntryInput(player_id=second, amount=FEE)
            )
        )
        await asyncio.sleep(8)
        stop.set()
        answered = await rogue
        assert "collect_entry" in answered, answered
        view = await handle.query(TournamentWorkflow.state)
        status = {e.player_id: e.status for e in view.entrants}
        assert status[second] is not EntrantStatus.PAID, view.entrants
        assert not pay.done(), "the second entry was answered as paid from a lifted receipt"
        assert await ledger.balance(db, ledger.user_account(second)) == FEE

    # A real worker answers the same keyed move: the fee moves once, and the entry is paid.
    async with build_worker(client, db, task_queue):
        await asyncio.wait_for(pay, 60)

        async def paid() -> bool:
            view = await handle.query(TournamentWorkflow.state)
            return {e.player_id: e.status for e in view.entrants}[second] is EntrantStatus.PAID

        await eventually(paid, 30)
        assert await ledger.balance(db, ledger.user_account(second)) == 0
        assert await ledger.balance(db, ledger.escrow_account(tid)) == 2 * FEE
        await handle.terminate("test done")


async def test_a_keyless_stop_does_not_end_the_tournament(
    client: Client, task_queue: str, db: Database
) -> None:
    """Found while fixing N1: the table's ``stop`` signal took no argument, so it carried no
    payload for the codec to refuse. A keyless client could stop any tournament's table: the
    tournament ended on the spot, ranked by stack (the chip leader takes first prize). Now a
    stop counts only when the tournament signed it."""
    tid = f"n1s-{uuid.uuid4().hex[:12]}"
    slow = {**SETTINGS, "actionTimeoutSeconds": 60}  # nobody acts: hand 1 waits
    async with build_worker(client, db, task_queue):
        handle = await start_paid_tournament(client, db, task_queue, tid, slow, hand_pause_ms=0)

        async def playing() -> TournamentView | None:
            view = await handle.query(TournamentWorkflow.state)
            return view if view.state is TournamentPhase.PLAYING else None

        await eventually(playing, 30)
        await asyncio.sleep(1)
        await _raw_signal(client, table_workflow_id(tid), "stop", Payloads())
        await asyncio.sleep(3)
        view = await handle.query(TournamentWorkflow.state)
        assert view.state is TournamentPhase.PLAYING, view.state
        assert not view.standings, view.standings
        await handle.terminate("test done")


async def _registering(
    client: Client, task_queue: str, tid: str
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    return await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings=SETTINGS),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )


async def _accepted_requests(handle: WorkflowHandle[Any, Any], name: str) -> list[UpdateRequest]:
    """The accepted ``name`` Updates in the workflow's history, header and sealed input."""
    found = []
    async for event in handle.fetch_history_events():
        if event.HasField("workflow_execution_update_accepted_event_attributes"):
            request = event.workflow_execution_update_accepted_event_attributes.accepted_request
            if request.input.name == name:
                found.append(request)
    return found


async def _send_again(
    client: Client, workflow_id: str, request: UpdateRequest, *, name: str, update_id: str
) -> str | None:
    """Send a lifted Update over raw gRPC (no key) as ``name`` under ``update_id``: its
    failure's message, or None when it was refused before it ran."""
    lifted = UpdateRequest()
    lifted.CopyFrom(request)
    lifted.meta.update_id = update_id
    lifted.input.name = name
    try:
        response = await client.workflow_service.update_workflow_execution(
            UpdateWorkflowExecutionRequest(
                namespace=client.namespace,
                workflow_execution=WorkflowExecution(workflow_id=workflow_id),
                request=lifted,
                wait_policy=WaitPolicy(
                    lifecycle_stage=UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED
                ),
            ),
            timeout=timedelta(seconds=8),
        )
    except RPCError:
        return None
    return response.outcome.failure.message if response.outcome.HasField("failure") else "ran"


async def test_a_sealed_update_sent_to_another_handler_is_refused(
    client: Client, task_queue: str, db: Database
) -> None:
    """A victim's sealed ``register`` input, lifted with its header out of the tournament's
    history and sent as ``unregister`` (the same fields parse as a leave): on the reviewed
    main the victim was unregistered by someone who holds no key."""
    tid = f"n1h-{uuid.uuid4().hex[:12]}"
    victim = f"{tid}-v"
    async with build_worker(client, db, task_queue):
        handle = await _registering(client, task_queue, tid)
        await handle.execute_update(
            TournamentWorkflow.register, RegisterInput(player_id=victim, owner_user_id=victim)
        )
        [request] = await _accepted_requests(handle, "register")
        outcome = await _send_again(
            client, handle.id, request, name="unregister", update_id=uuid.uuid4().hex
        )
        assert outcome != "ran", "the lifted input ran as unregister"
        assert outcome is None or "refusing a 'unregister' Update" in outcome
        view = await handle.query(TournamentWorkflow.state)
        status = {e.player_id: e.status for e in view.entrants}
        assert status.get(victim) is EntrantStatus.RESERVED, view.entrants
        await handle.terminate("test done")


async def test_a_victims_own_update_sent_again_changes_nothing(
    client: Client, task_queue: str, db: Database
) -> None:
    """The same handler this time (the independent review of the fix): a victim registered,
    left, and came back. Their sealed ``unregister``, lifted with its header out of history
    and sent again keyless under a fresh Update id, unregistered them again on the reviewed
    main; in a room, an old ``leave`` sent mid-hand folds the victim to a bet."""
    tid = f"n1u-{uuid.uuid4().hex[:12]}"
    victim = f"{tid}-v"
    async with build_worker(client, db, task_queue):
        handle = await _registering(client, task_queue, tid)
        register = RegisterInput(player_id=victim, owner_user_id=victim)
        await handle.execute_update(TournamentWorkflow.register, register)
        await handle.execute_update(
            TournamentWorkflow.unregister, UnregisterInput(player_id=victim)
        )
        await handle.execute_update(TournamentWorkflow.register, register)
        [leave] = await _accepted_requests(handle, "unregister")
        for update_id in (uuid.uuid4().hex, leave.meta.update_id):
            outcome = await _send_again(
                client, handle.id, leave, name="unregister", update_id=update_id
            )
            assert outcome != "ran" or update_id == leave.meta.update_id, outcome
        view = await handle.query(TournamentWorkflow.state)
        status = {e.player_id: e.status for e in view.entrants}
        assert status.get(victim) is EntrantStatus.RESERVED, view.entrants
        await handle.terminate("test done")


def test_every_update_has_a_validator_and_every_workflow_keeps_its_seen_ids() -> None:
    """The handler binding checks in the validator interceptor, which the SDK runs only for
    an Update that has a validator; and it keeps the ids it took in the state a workflow
    carries across continue-as-new (``seen_updates``), else only for the run."""
    import temporalio.workflow

    from worker import WORKFLOWS

    for cls in WORKFLOWS:
        definition = temporalio.workflow._Definition.must_from_class(cls)
        for name, update in definition.updates.items():
            assert update.validator is not None, f"{cls.__name__}.{name} has no validator"
        if definition.updates:
            assert isinstance(getattr(cls, "seen_updates", None), property), cls.__name__
