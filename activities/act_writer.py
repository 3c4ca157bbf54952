"""The worker's writer of act answers (docs/read-model.md, "Act answers"): the second of the
two writers of a table's decision that an ``act`` Update caused (``ACT_ANSWER_PATCH`` in
workflows/publisher.py). The API replica that made the Update writes the snapshot its answer
carries before it answers; this writes it too, so a crash or a lost write of either leaves
the store current.

The hook is a workflow inbound interceptor's ``handle_update_handler``: it sees the act
handler's return value in the worker, in the activation that completes the Update. It adds
no command and no history event, does nothing while the workflow replays
(``workflow.unsafe.is_replaying``), and hands the snapshot to this process's event loop
(``call_soon_threadsafe``: workflows run on the SDK's own threads and loops), where a short
task writes the newest version per table (``db/readstore.py write_act_answer``: upsert by
version, an older one changes nothing) after a grace (``WORKER_WRITE_GRACE``): the acting
replica writes first and wakes the next player, and this write normally finds the row written
and wakes nobody. It never rewrites a row of the same version (``rewrite=False``): written
after the grace, a lost task's snapshot could otherwise land after its retry's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from temporalio import workflow
from temporalio.worker import (
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from core.settings import FAULT_HELD
from db.engine import Database
from db.readstore import write_act_answer
from wire.table_messages import TableSnapshot

log = logging.getLogger(__name__)

WORKER_WRITE_GRACE = 0.25
"""Seconds the worker's write waits for the acting replica's (``ActWriter._drain``)."""


class ActWriter(Interceptor):
    """Give it to the worker (``worker.build_worker`` does). Two test-only fault switches
    (``SNG_TEST_FAULT_SKIP_WORKER_ACT_WRITE``, ``SNG_TEST_FAULT_STALL_WORKER_ACT_WRITE_SECONDS``,
    refused in prod; docs/operations.md): ``enabled=False`` drops every write, as a worker
    that died between the Update's completion and its write would; ``stall`` waits that long
    before each write, so a test can kill the worker in between."""

    def __init__(
        self,
        db: Database,
        *,
        enabled: bool = True,
        stall: float = 0.0,
        grace: float = WORKER_WRITE_GRACE,
    ) -> None:
        self.db = db
        self.enabled = enabled
        self.stall = stall
        self.grace = grace
        self.loop: asyncio.AbstractEventLoop | None = None
        self.latest: dict[str, TableSnapshot] = {}
        self.writing: asyncio.Task[None] | None = None
        self.written = 0
        self.landed = 0
        """Writes that changed the row (the acting replica had not written it yet)."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        if self.loop is None:
            try:
                self.loop = asyncio.get_running_loop()  # the worker is built on its loop
            except RuntimeError:
                log.warning("a worker built outside its event loop writes no act answers")
        writer = self

        class Inbound(_Inbound):
            owner = writer

        return Inbound

    def offer(self, state: TableSnapshot) -> None:
        """From a workflow's thread: pass the snapshot to the writer's loop."""
        if self.enabled and self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._take, state)

    def _take(self, state: TableSnapshot) -> None:
        prior = self.latest.get(state.key)
        if prior is None or prior.view.version <= state.view.version:
            self.latest[state.key] = state
        if self.writing is None or self.writing.done():
            self.writing = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        # The acting replica writes the same snapshot before it answers, and wakes the next
        # player: give it that long, so this write finds the row written and wakes nobody
        # (issue 30: written first, it woke every replica's re-read while the Update's
        # completion was still on its way, on the same cores). Snapshots that come meanwhile
        # coalesce, newest per table.
        if self.grace:
            await asyncio.sleep(self.grace)
        while self.latest:
            key, state = next(iter(self.latest.items()))
            del self.latest[key]
            if self.stall:  # a test fault: killed meanwhile, it never writes
                log.warning(FAULT_HELD, key, state.view.version, self.stall)
                await asyncio.sleep(self.stall)
            try:
                stored = await write_act_answer(self.db, state, rewrite=False)
                self.written += 1
                self.landed += stored is not None and stored.wrote
            except Exception:  # the API's write, or the next durable publication, covers it
                log.warning("could not write act answer %s v%s", key, state.view.version)


class _Inbound(WorkflowInboundInterceptor):
    owner: ActWriter

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        result = await super().handle_update_handler(input)
        state = getattr(result, "state", None)
        if (
            input.update == "act"
            and isinstance(state, TableSnapshot)
            and not workflow.unsafe.is_replaying()
        ):
            with workflow.unsafe.sandbox_unrestricted():
                self.owner.offer(state)
        return result
