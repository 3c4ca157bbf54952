"""The baseline's workflow: a no-op Update, so ``sng bench`` can time a bare round trip.

It lives alone in this module so the workflow sandbox imports nothing but temporalio.
"""

from __future__ import annotations

from temporalio import workflow

UPDATES_PER_RUN = 500
"""Stay well below the server's per-run limit on Updates (2,000 by default)."""


@workflow.defn(name="BenchEcho")
class EchoWorkflow:
    def __init__(self) -> None:
        self.touched = 0
        self.done = False

    @workflow.run
    async def run(self) -> int:
        await workflow.wait_condition(lambda: self.done)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.touched

    @workflow.update
    def touch(self, n: int) -> int:
        self.touched += 1
        return n

    @workflow.signal
    def finish(self) -> None:
        self.done = True
