"""Act answers (docs/read-model.md, "Act answers"; issue 30, decision (a)): a decision an act
caused is not published by local activity; the Update's answer carries the table's new public
snapshot, and the API replica that made the Update and the worker that ran it both write it
to the read store. Either writer alone tells the next player it is their turn; with neither,
the next durable publication does. Nothing is applied twice, and every history replays."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Replayer, Worker

from activities.act_writer import ActWriter
from core.settings import Settings
from db.engine import Database
from db.models import ReadState
from db.readstore import CHANNEL, write_public_now, write_state_now
from tests.conftest import serve_api
from tests.integration.helpers import eventually, heads_up, player, start_paid_tournament
from tests.integration.test_table import start, table_state
from tests.replay import histories_from, replay_histories
from wire.table_messages import ActInput, TableActResult, TableView
from worker import SINGLE_BATCH, WORKFLOWS
from workflows.table import TableWorkflow

PLAYERS = ["a", "b", "c"]


async def _row(db: Database, key: str) -> ReadState | None:
    async with db.session() as session:
        return await session.get(ReadState, key)


async def _actor_view(handle: WorkflowHandle[Any, Any]) -> tuple[str, TableView]:
    """Who is to act in the running hand (its first decision published), and their view."""

    async def dealt() -> tuple[str, TableView] | None:
        for p in PLAYERS:
            view = await handle.query(TableWorkflow.view, p)
            if view.hand is not None and view.hand.get("legal"):
                return p, view
        return None

    return await eventually(dealt, limit=30)


async def _act(handle: WorkflowHandle[Any, Any], update_id: str) -> TableActResult:
    """The actor checks or calls (the hand goes on), as an Update with this id."""
    actor, view = await _actor_view(handle)
    legal = view.hand["legal"] if view.hand else {}
    action = "check" if "check" in legal["actions"] else "call"
    inp = ActInput(player_id=actor, hand_no=view.hand_no, turn=view.hand["turn"], action=action)
    return await handle.execute_update(TableWorkflow.act, inp, id=update_id)


async def _replays(client: Client, workflow_id: str) -> None:
    (await replay_histories(client, await histories_from(client, [workflow_id]))).raise_on_failure()


async def test_an_act_answer_carries_the_public_snapshot_and_waits_for_no_local_activity(
    client: Client, worker: Worker, task_queue: str
) -> None:
    handle = await start(client, task_queue, table_state(PLAYERS, actionTimeoutSeconds=300))
    result = await _act(handle, "act-1")
    # One public snapshot, the version the answer names; no views and nobody's cards.
    assert result.state is not None
    assert result.actor_view is None and result.spectator_view is None
    assert result.state.private == {}
    assert result.state.view.version == result.version
    hand = result.state.view.hand
    assert hand is not None and not hand["over"] and hand["turn"] == result.turn
    assert result.state.legal is not None  # the next seat's turn, with its legal actions
    # The task that answered the Update scheduled no local activity (no publication marker).
    events = [e async for e in handle.fetch_history_events()]
    accepted = next(
        i
        for i, e in enumerate(events)
        if e.HasField("workflow_execution_update_accepted_event_attributes")
        and e.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
        == "act-1"
    )
    completed = next(
        i
        for i, e in enumerate(events)
        if e.HasField("workflow_execution_update_completed_event_attributes")
        and e.workflow_execution_update_completed_event_attributes.meta.update_id == "act-1"
    )
    between = events[accepted:completed]
    assert not [e for e in between if e.HasField("marker_recorded_event_attributes")]
    await handle.signal(TableWorkflow.stop)
    await handle.result()
    await _replays(client, handle.id)


async def test_the_worker_writes_the_answer_when_no_api_does(
    client: Client, worker: Worker, task_queue: str, db: Database
) -> None:
    """The Update went straight to Temporal (as if the API died after its answer): the
    worker's hook alone brings the store to the act's version, the next seat to act, and the
    row keeps each seat's sealed cards from the deal's publication."""
    handle = await start(client, task_queue, table_state(PLAYERS, actionTimeoutSeconds=300))
    result = await _act(handle, "act-w")
    assert result.state is not None

    async def written() -> ReadState | None:
        row = await _row(db, handle.id)
        return row if row is not None and row.version >= result.version else None

    row = await eventually(written)
    assert row.version == result.version
    assert row.public["view"]["hand"]["actor"] == result.state.view.hand["actor"]  # type: ignore[index]
    assert row.public["legal"] == result.state.legal
    assert sorted(row.private) == PLAYERS  # the hole cards, still sealed for their seats
    await handle.signal(TableWorkflow.stop)
    await handle.result()
    await _replays(client, handle.id)
    # A replay through the same hook hands it nothing (it writes only what it completes).
    writer = ActWriter(db)
    replayer = Replayer(
        workflows=list(WORKFLOWS),
        data_converter=client.data_converter,
        namespace=client.namespace,
        interceptors=[writer],
    )
    replayer._set_default_workflow_logic_flag(SINGLE_BATCH, enabled=True)
    await replayer.replay_workflow(await handle.fetch_history())
    await asyncio.sleep(0.1)  # anything handed over would be on this loop by now
    assert writer.latest == {} and writer.writing is None and writer.written == 0


async def test_with_neither_writer_the_next_durable_publication_covers_the_act(
    client: Client, db: Database, task_queue: str
) -> None:
    """Both writers lost (no API, and a worker whose hook is switched off): the store stays
    at the version before the act until the next seat's timer fires, whose decision the table
    publishes by local activity. A retry of the same Update is answered, not applied again."""
    from worker import build_worker

    async with build_worker(client, db, task_queue, write_acts=False):
        handle = await start(client, task_queue, table_state(PLAYERS, actionTimeoutSeconds=10))
        result = await _act(handle, "act-n")
        row = await _row(db, handle.id)
        assert row is not None and row.version < result.version  # nobody wrote the answer

        async def covered() -> ReadState | None:
            row = await _row(db, handle.id)
            return row if row is not None and row.version > result.version else None

        await eventually(covered, limit=30)
        # The same Update again: Temporal answers it with the first outcome.
        events = [e async for e in handle.fetch_history_events()]
        again = await handle.get_update_handle_for(TableWorkflow.act, "act-n").result()
        assert again.version == result.version and again.turn == result.turn
        accepted = [
            e
            for e in events
            if e.HasField("workflow_execution_update_accepted_event_attributes")
            and e.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
            == "act-n"
        ]
        assert len(accepted) == 1
        await handle.signal(TableWorkflow.stop)
        await handle.result()
    await _replays(client, handle.id)


SETTINGS = heads_up()


@pytest.mark.parametrize(
    ("api_writes", "worker_writes"), [(False, True), (True, False)], ids=["worker", "api"]
)
async def test_either_writer_alone_tells_the_next_player_their_turn(
    client: Client,
    db: Database,
    task_queue: str,
    settings: Settings,
    api_writes: bool,
    worker_writes: bool,
) -> None:
    """One writer lost: the API's fault switch (it answers the act without writing, as if it
    died in between) or the worker's (its hook writes nothing). The other writer's write wakes
    the next player's long-poll with their legal actions; the same act sent again (its
    Idempotency-Key) is answered, not applied twice."""
    from worker import build_worker

    faulty = settings.model_copy(update={"test_fault_skip_act_write": not api_writes})
    tid = f"aa-{uuid.uuid4().hex[:8]}"
    users = [f"{tid}-0", f"{tid}-1"]
    async with (
        build_worker(client, db, task_queue, write_acts=worker_writes),
        serve_api(faulty) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)

        async def state(user: str, **params: Any) -> dict[str, Any]:
            r = await http.get(
                f"/tournaments/{tid}/game-state", headers=player(settings, user), params=params
            )
            assert r.status_code == 200, r.text
            body: dict[str, Any] = r.json()
            return body

        async def actor() -> tuple[str, dict[str, Any]] | None:
            for u in users:
                s = await state(u)
                if s.get("hand") and s.get("legalActions"):
                    return u, s
            return None

        mover, mine = await eventually(actor, limit=30)
        other = next(u for u in users if u != mover)
        theirs = await state(other)
        parked = asyncio.create_task(state(other, waitForChange=theirs["version"], timeout=20))
        legal = mine["legalActions"]
        body = {
            "handNumber": mine["handNumber"],
            "turn": mine["turn"],
            "action": "check" if "check" in legal["actions"] else "call",
        }
        headers = {**player(settings, mover), "Idempotency-Key": f"k-{tid}"}
        r = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
        assert r.status_code == 200, r.text
        woke = await asyncio.wait_for(parked, 25)
        assert woke["legalActions"], woke  # told it is their turn
        assert woke["turn"] == mine["turn"] + 1
        again = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
        assert again.status_code == 200, again.text
        assert again.json()["turn"] == r.json()["turn"]
        assert (await state(other))["turn"] == mine["turn"] + 1  # applied once


async def test_the_acting_replica_writes_first_and_the_worker_wakes_nobody(
    client: Client, db: Database, task_queue: str, settings: Settings
) -> None:
    """Both writers up: the acting replica's write is the one that lands and notifies; the
    worker's, made after its grace (``WORKER_WRITE_GRACE``), finds the row written and wakes
    nobody. (It used to write first, while the Update's completion was on its way, and its
    notification woke every replica's re-read on the same cores: issue 30.)"""
    from worker import build_worker

    tid = f"aa-{uuid.uuid4().hex[:8]}"
    users = [f"{tid}-0", f"{tid}-1"]
    worker = build_worker(client, db, task_queue)
    writer = next(i for i in worker.config()["interceptors"] if isinstance(i, ActWriter))
    async with worker, serve_api(settings) as url, httpx.AsyncClient(base_url=url) as http:
        await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)

        async def actor() -> tuple[str, dict[str, Any]] | None:
            for u in users:
                r = await http.get(
                    f"/tournaments/{tid}/game-state", headers=player(settings, u), timeout=30
                )
                assert r.status_code == 200, r.text
                if r.json().get("hand") and r.json().get("legalActions"):
                    return u, r.json()
            return None

        mover, mine = await eventually(actor, limit=30)
        legal = mine["legalActions"]
        body = {
            "handNumber": mine["handNumber"],
            "turn": mine["turn"],
            "action": "check" if "check" in legal["actions"] else "call",
        }
        r = await http.post(
            f"/tournaments/{tid}/act", headers=player(settings, mover), json=body, timeout=30
        )
        assert r.status_code == 200, r.text

        async def worker_wrote() -> bool | None:
            return True if writer.written >= 1 else None

        await eventually(worker_wrote)
        assert writer.landed == 0  # the API's write was there first


async def test_the_second_writer_of_an_answer_writes_nothing_and_wakes_nobody(
    db: Database,
) -> None:
    """``write_public_now``: one notification per answer however many write it, an older
    version changes nothing, and the sealed hole cards stay only while the same hand runs."""
    key = f"table-aa-{uuid.uuid4().hex[:8]}"
    heard: list[str] = []

    def public(hand_no: int, turn: int) -> dict[str, Any]:
        return {"view": {"hand_no": hand_no, "hand": {"over": False, "turn": turn}}}

    async with db.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        listener: Any = raw.driver_connection
        await listener.add_listener(CHANNEL, lambda *args: heard.append(args[3]))
        await write_state_now(
            db, key=key, kind="table", version=4, public=public(1, 0), private={"a": "sealed"}
        )
        stored = [  # the API's write and the worker's
            await write_public_now(
                db,
                key=key,
                kind="table",
                version=5,
                public=json.dumps(public(1, 1)),
                hand_runs=True,
            )
            for _ in range(2)
        ]
        # Each says what the row holds (the API serves that without reading it back).
        assert [(s.version, s.wrote, s.private) for s in stored if s] == [
            (5, True, {"a": "sealed"}),
            (5, False, {"a": "sealed"}),
        ]
        assert stored[0] and stored[1] and stored[0].updated_at == stored[1].updated_at
        late = await write_public_now(  # the worker's, after its grace: never a rewrite
            db,
            key=key,
            kind="table",
            version=5,
            public=json.dumps(public(1, 7)),
            hand_runs=True,
            rewrite=False,
        )
        assert late is not None and (late.version, late.wrote) == (5, False)
        older = await write_public_now(
            db, key=key, kind="table", version=3, public=json.dumps(public(1, 9)), hand_runs=True
        )
        assert older is not None and (older.version, older.wrote) == (5, False)
        row = await _row(db, key)
        assert row is not None and row.version == 5 and row.public == public(1, 1)
        assert row.private == {"a": "sealed"}  # the deal's sealed part, kept
        await write_public_now(
            db, key=key, kind="table", version=6, public=json.dumps(public(2, 1)), hand_runs=True
        )
        row = await _row(db, key)
        assert row is not None and row.private == {}  # another hand: nothing of it to keep

        async def last() -> bool | None:
            return True if f"{key} 6" in heard else None

        await eventually(last)
        assert heard == [f"{key} 4", f"{key} 5", f"{key} 6"]
