"""S1 (security review 3), the codec half: each money move's payloads are bound to that move.

The codec binds an activity's payloads (input, heartbeats, result) to its workflow, its type
and its id, but an id the server numbered binds as ``""``: every ``collect_entry`` of one
tournament shared one binding, so a fee's sealed heartbeat opened as any other fee's (the
reviewer's probe: activities 7 and 12 bound to the same bytes). Now every money activity of a
tournament carries the id of its own move (``collect:<entry key>``, ``refund:<refund key>``,
``payout:<intent id>``), and a heartbeat lifted from one move does not even open as another's.
The activity's own check of a heartbeat is tests/security/test_s1_heartbeat_of_another_move.py.
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import ActivitySerializationContext
from temporalio.worker import Worker

from core.codec import REFUSED_ENCODING, EncryptionCodec
from db import ledger
from db.engine import Database
from tests.integration.helpers import SETTINGS, enter_paid
from wire.messages import CancelInput, CreateTournamentInput
from workflows.tournament import TournamentWorkflow

FEE = int(SETTINGS["entryFee"])


def _context(workflow_id: str, activity_id: str) -> ActivitySerializationContext:
    return ActivitySerializationContext(
        namespace="default",
        activity_id=activity_id,
        activity_type="collect_entry",
        activity_task_queue="q",
        workflow_id=workflow_id,
        workflow_type="TournamentWorkflow",
        is_local=False,
    )


async def _opens_as(codec: EncryptionCodec, sealed_for: str, opened_as: str) -> bool:
    heartbeat = Payload(metadata={"encoding": b"json/plain"}, data=b'{"tx_hash":"0xVICTIM"}')
    sealed = await codec.with_context(_context("tournament-T", sealed_for)).encode([heartbeat])
    opened = await codec.with_context(_context("tournament-T", opened_as)).decode(sealed)
    return opened[0].metadata.get("encoding") != REFUSED_ENCODING.encode()


async def test_numbered_ids_shared_one_binding_and_move_ids_do_not() -> None:
    codec = EncryptionCodec("k1", uuid.uuid4().bytes * 2)
    # What the reviewer found: two numbered activities of one tournament, one binding.
    assert await _opens_as(codec, "7", "12")
    # What the workflow schedules now: each move's own id.
    assert not await _opens_as(codec, "collect:T:entry:victim:1", "collect:T:entry:attacker:1")
    assert await _opens_as(codec, "collect:T:entry:victim:1", "collect:T:entry:victim:1")


async def test_a_tournaments_money_activities_carry_their_moves_ids(
    client: Client,
    db: Database,
    worker: Worker,
    task_queue: str,
) -> None:
    tid = f"s1ids-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings=SETTINGS),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    players = [f"{tid}-a", f"{tid}-b"]
    for user in players:
        await enter_paid(db, handle, user, FEE)
    await handle.execute_update(TournamentWorkflow.cancel, CancelInput())
    history = await handle.fetch_history()
    scheduled = {
        e.activity_task_scheduled_event_attributes.activity_id: (
            e.activity_task_scheduled_event_attributes.activity_type.name
        )
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    }
    money = {i: kind for i, kind in scheduled.items() if kind in ("collect_entry", "refund_entry")}
    assert money == {
        **{f"collect:{tid}:entry:{u}:1": "collect_entry" for u in players},
        **{f"refund:{tid}:refund:{u}:1": "refund_entry" for u in players},
    }
    assert all(
        i.isdigit()
        for i, kind in scheduled.items()
        if kind not in ("collect_entry", "refund_entry")
    ), "only money moves choose their id"
    for user in players:
        assert await ledger.balance(db, ledger.user_account(user)) == FEE


@pytest.mark.parametrize("bound", [True, False])
def test_money_activity_ids(bound: bool) -> None:
    from workflows.effects import money_activity_id

    assert money_activity_id("payout", "t:payout:2", bound) == (
        "payout:t:payout:2" if bound else None
    )
