"""The codec binds each payload to its workflow (security review: "the codec binds each
payload's context as AES-GCM associated data").

Sealing is the codec's authentication (C2), but a sealed payload used to open anywhere: whoever
can read one workflow's history and write to Temporal, without the key, could lift a victim's
sealed ``register`` and ``pay_entry`` Updates from one tournament and send them, byte for byte,
to another. On the reviewed main the second tournament seated the victim and took a second
entry fee from their account, a tournament they never chose. Now every payload carries
``[namespace, workflow id]`` as associated data, and a worker refuses one sealed for another
workflow: nothing is registered, nothing is charged, and the target tournament goes on.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from temporalio.api.common.v1 import Payload, Payloads, WorkflowExecution
from temporalio.api.enums.v1 import UpdateWorkflowExecutionLifecycleStage
from temporalio.api.update.v1 import Input, Meta, Request, WaitPolicy
from temporalio.api.workflowservice.v1 import UpdateWorkflowExecutionRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.converter import WorkflowSerializationContext
from temporalio.service import RPCError
from temporalio.worker import Worker

from core.codec import EncryptionCodec, PayloadContextError, TamperedPayloadError
from db import ledger
from db.engine import Database
from tests.integration.helpers import SETTINGS
from wire.messages import (
    CreateTournamentInput,
    EntrantStatus,
    PayEntryInput,
    RegisterInput,
)
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])


async def _registering(client: Client, task_queue: str, tid: str) -> WorkflowHandle:  # type: ignore[type-arg]
    return await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings=SETTINGS),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )


async def _sealed_update_args(handle: WorkflowHandle, name: str) -> Payloads:  # type: ignore[type-arg]
    """The sealed arguments of the Update ``name`` as the target's history holds them."""
    history = await handle.fetch_history()
    for event in history.events:
        if event.HasField("workflow_execution_update_accepted_event_attributes"):
            request = event.workflow_execution_update_accepted_event_attributes.accepted_request
            if request.input.name == name:
                return request.input.args
    raise AssertionError(f"no accepted {name} Update in {handle.id}")


async def _replay_into(client: Client, workflow_id: str, name: str, args: Payloads) -> str:
    """Send sealed bytes as an Update over raw gRPC: no data converter, no key."""
    request = UpdateWorkflowExecutionRequest(
        namespace=client.namespace,
        workflow_execution=WorkflowExecution(workflow_id=workflow_id),
        request=Request(
            meta=Meta(update_id=uuid.uuid4().hex, identity="lifted-payload"),
            input=Input(name=name, args=args),
        ),
        wait_policy=WaitPolicy(
            lifecycle_stage=UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED
        ),
    )
    try:
        response = await client.workflow_service.update_workflow_execution(
            request, timeout=timedelta(seconds=8)
        )
    except RPCError as err:
        return f"refused: {err.status.name}"
    outcome = response.outcome
    return "failed" if outcome.HasField("failure") else "completed"


async def test_a_victims_sealed_entry_lifted_into_another_tournament_is_refused(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    victim = f"victim-{uuid.uuid4().hex[:8]}"
    chosen = await _registering(client, task_queue, f"aad{uuid.uuid4().hex}")
    other = await _registering(client, task_queue, f"aad{uuid.uuid4().hex}")
    # The victim enters the tournament they chose, through the codec, and keeps one more fee.
    await ledger.transfer(
        db,
        key=f"seed-{victim}",
        source=ledger.MINT,
        destination=ledger.user_account(victim),
        amount=2 * FEE,
    )
    await chosen.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id=victim, owner_user_id=victim)
    )
    await chosen.execute_update(
        TournamentWorkflow.pay_entry, PayEntryInput(player_id=victim, amount=FEE)
    )
    assert await ledger.balance(db, ledger.user_account(victim)) == FEE

    # Someone with Temporal access but no key lifts both Updates, sealed, into the other one.
    for name in ("register", "pay_entry"):
        args = await _sealed_update_args(chosen, name)
        outcome = await _replay_into(client, other.id, name, args)
        assert outcome != "completed", f"the lifted {name} ran in {other.id}"

    await asyncio.sleep(1)
    assert await ledger.balance(db, ledger.user_account(victim)) == FEE
    assert (
        await ledger.balance(db, ledger.escrow_account(other.id.removeprefix("tournament-"))) == 0
    )
    view = await other.query(TournamentWorkflow.state)
    assert victim not in {e.player_id for e in view.entrants}, view.entrants

    # The target is not wedged: a real entrant still registers there.
    someone = f"someone-{uuid.uuid4().hex[:8]}"
    result = await asyncio.wait_for(
        other.execute_update(
            TournamentWorkflow.register, RegisterInput(player_id=someone, owner_user_id=someone)
        ),
        20,
    )
    assert result.status is EntrantStatus.RESERVED
    for handle in (chosen, other):
        await handle.terminate("test done")


def _context(workflow_id: str) -> WorkflowSerializationContext:
    return WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)


async def test_the_binding_is_sealed_into_the_tag() -> None:
    """Rewriting the header to the target's id does not help: the tag covers it."""
    codec = EncryptionCodec("k1", b"k" * 32)
    [sealed] = await codec.with_context(_context("tournament-a")).encode(
        [Payload(metadata={"encoding": b"json/plain"}, data=b'{"player_id":"victim"}')]
    )
    with pytest.raises(PayloadContextError, match=r"sealed for .*tournament-a.* presented to"):
        await codec.with_context(_context("tournament-b")).open([sealed])
    forged = Payload()
    forged.CopyFrom(sealed)
    forged.metadata["encryption-context"] = b'["workflow","default","tournament-b"]'
    with pytest.raises(TamperedPayloadError):
        await codec.with_context(_context("tournament-b")).open([forged])
    # Its own workflow, and the display codec (no context: the UI), open it.
    plain = b'{"player_id":"victim"}'
    assert (await codec.with_context(_context("tournament-a")).decode([sealed]))[0].data == plain
    assert (await codec.decode([sealed]))[0].data == plain


async def test_payloads_sealed_before_binding_need_the_migration_switch() -> None:
    old = EncryptionCodec("k1", b"k" * 32)
    [unbound] = await old.encode([Payload(metadata={"encoding": b"json/plain"}, data=b"1")])
    with pytest.raises(PayloadContextError, match="without a workflow binding"):
        await old.with_context(_context("tournament-a")).open([unbound])
    migrating = EncryptionCodec("k1", b"k" * 32, accept_unbound=True)
    assert (await migrating.with_context(_context("tournament-a")).decode([unbound]))[
        0
    ].data == b"1"
