"""Crash safety of act answers (issue 30; docs/read-model.md, "Act answers"): the API and the
worker run as processes, and each is killed with SIGKILL between the act Update's answer (its
completion) and its write of the snapshot, by a test-only fault switch that stalls the write
(``SNG_TEST_FAULT_STALL_ACT_WRITE_SECONDS``, ``SNG_TEST_FAULT_STALL_WORKER_ACT_WRITE_SECONDS``,
refused in prod) while the test kills the process. In each case the next player is told it is
their turn (at once while one writer lives; when both die, by the client's retry or else only
at the next durable publication, the timeout's), the act is applied once however often the
client retries it, the chips add up, and every history replays.

A second API replica, in this process, serves the players' reads and the client's retries."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from temporalio.client import Client, WorkflowHandle

from activities.act_writer import ActWriter
from api.services.play import ActBody, act_update_id
from core.settings import Settings
from db.engine import Database
from db.readstore import CHANNEL
from tests.conftest import serve_api
from tests.integration.helpers import eventually, heads_up, player, start_paid_tournament
from tests.integration.processes import Processes, running
from tests.replay import histories_from, replay_histories
from wire.ids import table_workflow_id
from wire.table_messages import TableActResult
from workflows.table import TableWorkflow

STACK = 1000
STALL = 120.0
"""A stalled writer waits this long: the test kills its process well before."""


def tournament(timeout_seconds: int) -> dict[str, Any]:
    return heads_up(action_timeout_seconds=timeout_seconds, stack=STACK)


@pytest.fixture
def processes(settings: Settings, tmp_path: Path) -> Iterator[Processes]:
    with running(settings, tmp_path) as procs:
        yield procs


class Table:
    """Two seats of a tournament table, read through the in-process replica."""

    def __init__(self, http: httpx.AsyncClient, settings: Settings, tid: str) -> None:
        self.http = http
        self.settings = settings
        self.tid = tid
        self.users = [f"{tid}-0", f"{tid}-1"]

    async def state(self, user: str, **params: Any) -> dict[str, Any]:
        r = await self.http.get(
            f"/tournaments/{self.tid}/game-state",
            headers=player(self.settings, user),
            params=params,
        )
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    async def mover(self) -> tuple[str, dict[str, Any]]:
        async def found() -> tuple[str, dict[str, Any]] | None:
            for user in self.users:
                s = await self.state(user)
                if s.get("hand") and s.get("legalActions"):
                    return user, s
            return None

        return await eventually(found, limit=60)

    async def park_the_other(self, mover: str) -> tuple[str, asyncio.Task[dict[str, Any]]]:
        """The seat that waits, and its long-poll for the next version, parked now."""
        other = next(u for u in self.users if u != mover)
        theirs = await self.state(other)
        return other, asyncio.create_task(
            self.state(other, waitForChange=theirs["version"], timeout=30)
        )

    def act(self, mover: str, mine: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The mover's check or call (the hand goes on), and the headers of its one key."""
        legal = mine["legalActions"]
        body = {
            "handNumber": mine["handNumber"],
            "turn": mine["turn"],
            "action": "check" if "check" in legal["actions"] else "call",
        }
        key = f"k-{self.tid}"
        return body, {**player(self.settings, mover), "Idempotency-Key": key}


def update_id(mover: str, body: dict[str, Any], headers: dict[str, str]) -> str:
    return act_update_id(mover, ActBody.model_validate(body), headers["Idempotency-Key"])


async def accepted(handle: WorkflowHandle[Any, Any], uid: str) -> tuple[int, bool]:
    """How many times the table accepted the Update ``uid``, and whether it completed."""
    events = [e async for e in handle.fetch_history_events()]
    took = [
        e
        for e in events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
        and e.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
        == uid
    ]
    done = any(
        e.HasField("workflow_execution_update_completed_event_attributes")
        and e.workflow_execution_update_completed_event_attributes.meta.update_id == uid
        for e in events
    )
    return len(took), done


def chips(state: dict[str, Any]) -> int:
    """Every chip at the table: in the stacks and put in this hand."""
    return sum(p["stack"] + p["committed"] for p in state["hand"]["players"])


@contextlib.asynccontextmanager
async def notifications(db: Database) -> AsyncIterator[list[str]]:
    """The read model's notifications while the block runs."""
    heard: list[str] = []
    async with db.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        listener: Any = raw.driver_connection
        await listener.add_listener(CHANNEL, lambda *args: heard.append(args[3]))
        yield heard


async def _quiet(heard: list[str], calm: float = 1.0) -> None:
    """Until no notification has come for ``calm`` seconds."""
    while True:
        seen = len(heard)
        await asyncio.sleep(calm)
        if len(heard) == seen:
            return


def _store_reads() -> float:
    """This process's reads of the read store (``sng_api_read_store_reads_total``)."""
    return REGISTRY.get_sample_value("sng_api_read_store_reads_total") or 0.0


def _served_ahead() -> float:
    """This process's act answers served before their write (``_serve_ahead``)."""
    return REGISTRY.get_sample_value("sng_api_act_answers_served_ahead_total") or 0.0


async def _replays(client: Client, *workflow_ids: str) -> None:
    histories = await histories_from(client, list(workflow_ids))
    (await replay_histories(client, histories)).raise_on_failure()


async def _post(http: httpx.AsyncClient, url: str, **kwargs: Any) -> httpx.Response:
    return await http.post(url, **kwargs)


async def test_the_api_killed_between_the_answer_and_its_write(
    client: Client, db: Database, settings: Settings, processes: Processes
) -> None:
    """The replica that made the Update dies before its write: the worker's write tells the
    next player. The replica served the answer before writing it (``_serve_ahead``), so the
    client has it; a retry of the same act on another replica (a client unsure it was heard)
    gets the answer of the one act applied."""
    tid = f"af-{uuid.uuid4().hex[:8]}"
    processes.worker()
    doomed, doomed_url = processes.api(test_fault_stall_act_write_seconds=STALL)
    async with (
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
        httpx.AsyncClient(base_url=doomed_url, timeout=STALL) as http_doomed,
    ):
        handle = await start_paid_tournament(
            client, db, settings.temporal_task_queue, tid, tournament(300), hand_pause_ms=0
        )
        table = Table(http, settings, tid)
        mover, mine = await table.mover()
        other, parked = await table.park_the_other(mover)
        body, headers = table.act(mover, mine)
        sent = asyncio.create_task(
            _post(http_doomed, f"/tournaments/{tid}/act", headers=headers, json=body)
        )
        table_handle = client.get_workflow_handle(table_workflow_id(tid))
        uid = update_id(mover, body, headers)
        await processes.held(doomed, table_handle.id)  # it has the answer, not written
        answered = await sent  # served before the write that is held
        assert answered.status_code == 200, answered.text
        assert answered.json()["turn"] == mine["turn"] + 1
        processes.kill(doomed)
        assert await accepted(table_handle, uid) == (1, True)

        woke = await asyncio.wait_for(parked, 40)  # the worker's write alone
        assert woke["legalActions"] and woke["turn"] == mine["turn"] + 1, woke
        again = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
        assert again.status_code == 200, again.text
        assert again.json()["turn"] == mine["turn"] + 1
        assert await accepted(table_handle, uid) == (1, True)  # applied once
        now = await table.state(other)
        assert now["turn"] == mine["turn"] + 1 and chips(now) == 2 * STACK
        await client.get_workflow_handle(handle.id).terminate("test over")
        await table_handle.terminate("test over")
    await _replays(client, handle.id, table_handle.id)


async def test_the_worker_killed_between_the_completion_and_its_write(
    client: Client, db: Database, settings: Settings, processes: Processes
) -> None:
    """The worker dies after the Update completed, before its write: the API's write told
    the next player already; another worker carries the table on, the retried act is
    answered, not applied again."""
    tid = f"af-{uuid.uuid4().hex[:8]}"
    doomed = processes.worker(test_fault_stall_worker_act_write_seconds=STALL)
    async with (
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        handle = await start_paid_tournament(
            client, db, settings.temporal_task_queue, tid, tournament(300), hand_pause_ms=0
        )
        table = Table(http, settings, tid)
        mover, mine = await table.mover()
        other, parked = await table.park_the_other(mover)
        body, headers = table.act(mover, mine)
        r = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
        assert r.status_code == 200, r.text
        await processes.held(doomed, table_workflow_id(tid))
        processes.kill(doomed)  # its writer held the answer: it never wrote
        woke = await asyncio.wait_for(parked, 40)  # the API's write alone
        assert woke["legalActions"] and woke["turn"] == mine["turn"] + 1, woke

        processes.worker()
        again = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
        assert again.status_code == 200, again.text
        assert again.json() == r.json()
        table_handle = client.get_workflow_handle(table_workflow_id(tid))
        assert await accepted(table_handle, update_id(mover, body, headers)) == (1, True)
        # Play goes on on the new worker: the next player acts.
        nxt_body, nxt_headers = table.act(other, woke)
        moved = await http.post(f"/tournaments/{tid}/act", headers=nxt_headers, json=nxt_body)
        assert moved.status_code == 200, moved.text
        now = await table.state(mover)
        assert now["version"] >= moved.json()["version"] and chips(now) == 2 * STACK
        await client.get_workflow_handle(handle.id).terminate("test over")
        await table_handle.terminate("test over")
    await _replays(client, handle.id, table_handle.id)


@pytest.mark.parametrize("retried", [True, False], ids=["client-retries", "nobody-retries"])
async def test_both_killed_the_next_player_waits_for_a_retry_or_the_timeout(
    client: Client, db: Database, settings: Settings, processes: Processes, retried: bool
) -> None:
    """The API and the worker both die between the Update's answer and their writes: the
    store stays at the version before the act (the client has its answer: the API served it
    before the write). A retry of the same act (the same Idempotency-Key, on another
    replica) is answered with the one act applied and its write tells the next player at
    once; without a retry the next player hears nothing before that decision's deadline, and
    then the timeout's durable publication (on a new worker) moves the table on: the crash of
    both writers in the same instant that issue 30 accepts."""
    timeout = 8
    tid = f"af-{uuid.uuid4().hex[:8]}"
    worker = processes.worker(test_fault_stall_worker_act_write_seconds=STALL)
    doomed, doomed_url = processes.api(test_fault_stall_act_write_seconds=STALL)
    async with (
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
        httpx.AsyncClient(base_url=doomed_url, timeout=STALL) as http_doomed,
        notifications(db) as heard,
    ):
        handle = await start_paid_tournament(
            client, db, settings.temporal_task_queue, tid, tournament(timeout), hand_pause_ms=0
        )
        table = Table(http, settings, tid)
        mover, mine = await table.mover()
        other = next(u for u in table.users if u != mover)
        theirs = await table.state(other)
        body, headers = table.act(mover, mine)
        sent = asyncio.create_task(
            _post(http_doomed, f"/tournaments/{tid}/act", headers=headers, json=body)
        )
        table_handle = client.get_workflow_handle(table_workflow_id(tid))
        uid = update_id(mover, body, headers)
        await processes.held(worker, table_handle.id)  # the Update completed
        await processes.held(doomed, table_handle.id)  # and the API has its answer
        processes.kill(doomed)
        processes.kill(worker)
        # The API served the answer before its held write (``_serve_ahead``): the client has
        # it. A retry below is a client unsure it was heard.
        assert (await sent).status_code == 200
        answer: TableActResult = await table_handle.get_update_handle_for(
            TableWorkflow.act, uid
        ).result()
        assert answer.state is not None
        deadline_ms = answer.state.view.deadline_ms
        assert deadline_ms is not None
        processes.worker()  # the table's timers need a worker
        parked = asyncio.create_task(
            table.state(other, waitForChange=theirs["version"], timeout=30)
        )
        if retried:
            again = await http.post(f"/tournaments/{tid}/act", headers=headers, json=body)
            assert again.status_code == 200, again.text
            assert again.json()["turn"] == mine["turn"] + 1
            woke = await asyncio.wait_for(parked, 40)
            assert woke["legalActions"] and woke["turn"] == mine["turn"] + 1, woke
            assert time.time() * 1000 < deadline_ms  # told in time to act
        else:
            woke = await asyncio.wait_for(parked, 40)
            # Not before the deadline: nobody wrote the act's version, so the first change
            # the next player sees is the timeout's durable publication, past their turn.
            assert time.time() * 1000 >= deadline_ms
            assert f"{table_handle.id} {answer.version}" not in heard
            assert woke["handNumber"] > mine["handNumber"] or woke["turn"] > mine["turn"] + 1
            acted = [
                a for a in (woke["hand"] or {}).get("actions", []) if a.get("auto") == "timeout"
            ]
            assert acted or woke["handNumber"] > mine["handNumber"], woke
        assert await accepted(table_handle, uid) == (1, True)  # applied once
        now = await table.state(other)
        if now.get("hand") and not now["hand"]["over"]:
            assert chips(now) == 2 * STACK
        await client.get_workflow_handle(handle.id).terminate("test over")
        await table_handle.terminate("test over")
    await _replays(client, handle.id, table_handle.id)


async def _one_act(
    client: Client, db: Database, settings: Settings, http: httpx.AsyncClient
) -> tuple[Table, str, dict[str, Any], dict[str, Any], dict[str, str]]:
    """A tournament on the test's task queue, and its first seat to act (not acted yet)."""
    tid = f"af-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(
        client, db, settings.temporal_task_queue, tid, tournament(300), hand_pause_ms=0
    )
    table = Table(http, settings, tid)
    mover, mine = await table.mover()
    body, headers = table.act(mover, mine)
    return table, mover, mine, body, headers


async def _end(client: Client, tid: str) -> None:
    for workflow_id in (f"tournament-{tid}", table_workflow_id(tid)):
        await client.get_workflow_handle(workflow_id).terminate("test over")


async def test_the_api_and_the_worker_write_the_same_row(
    client: Client, db: Database, settings: Settings
) -> None:
    """The API writes the snapshot's JSON as the answer brought it, the worker from its
    model: the same row, so whichever writes second writes nothing and notifies nobody (one
    notification of the act's version)."""
    from worker import build_worker

    built = build_worker(client, db, settings.temporal_task_queue)
    writer = next(i for i in built.config()["interceptors"] if isinstance(i, ActWriter))
    async with (
        built,
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
        notifications(db) as heard,
    ):
        table, mover, _mine, body, headers = await _one_act(client, db, settings, http)
        r = await http.post(f"/tournaments/{table.tid}/act", headers=headers, json=body)
        assert r.status_code == 200, r.text  # the API wrote before it answered

        async def worker_wrote() -> bool | None:
            return True if writer.written >= 1 else None

        await eventually(worker_wrote)
        table_id = table_workflow_id(table.tid)
        answer: TableActResult = (
            await client.get_workflow_handle(table_id)
            .get_update_handle_for(TableWorkflow.act, update_id(mover, body, headers))
            .result()
        )
        mark = f"{table_id} {answer.version}"

        async def notified() -> bool | None:
            return True if mark in heard else None

        await eventually(notified)
        await asyncio.sleep(0.5)  # a second notification would be here by now
        assert heard.count(mark) == 1, heard
        await _end(client, table.tid)


async def test_the_acting_replica_serves_its_write_without_reading_it_back(
    client: Client, db: Database, settings: Settings
) -> None:
    """With the API the only writer, the replica that made the act serves the act's version
    from what its write said the row holds: it reads neither its own write nor, on its own
    notification, the row again (it did both: two reads per act). At most one read happens
    meanwhile, the watch's periodic safety read. The next player sees their turn there."""
    from worker import build_worker

    async with (
        build_worker(client, db, settings.temporal_task_queue, write_acts=False),
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
        notifications(db) as heard,
    ):
        table, mover, mine, body, headers = await _one_act(client, db, settings, http)
        other = next(u for u in table.users if u != mover)
        await _quiet(heard)  # the tournament's own writes at the start are done
        before, seen, ahead = _store_reads(), len(heard), _served_ahead()
        r = await http.post(f"/tournaments/{table.tid}/act", headers=headers, json=body)
        assert r.status_code == 200, r.text
        assert _served_ahead() == ahead + 1  # served before its write, written behind
        mark = f"{table_workflow_id(table.tid)} "

        async def notified() -> bool | None:
            return True if any(h.startswith(mark) for h in heard[seen:]) else None

        await eventually(notified)
        await asyncio.sleep(0.5)  # the notification reached the replica too
        # Each other notification meanwhile (the tournament's) may cost the watch a read.
        others = [h for h in heard[seen:] if not h.startswith(mark)]
        assert _store_reads() - before <= 1 + len(others), heard[seen:]
        theirs = await table.state(other)
        assert theirs["legalActions"] and theirs["turn"] == mine["turn"] + 1
        assert theirs["version"] == r.json()["version"]
        # Both still see their own cards: the write kept the deal's sealed parts.
        for user, state in ((other, theirs), (mover, await table.state(mover))):
            seat = next(s["seat"] for s in state["seats"] if s["playerId"] == user)
            hole = next(p for p in state["hand"]["players"] if p["seat"] == seat)["holeCards"]
            assert hole and len(hole) == 2, state
        await _end(client, table.tid)
