"""A stand-in parent for a lone TableWorkflow: takes its hand reports so they land in history."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import workflow
from temporalio.common import RawValue


@workflow.defn
class HandSink:
    def __init__(self) -> None:
        self.signals: list[str] = []
        self.done = False

    @workflow.run
    async def run(self) -> list[str]:
        await workflow.wait_condition(lambda: self.done)
        return self.signals

    @workflow.signal(dynamic=True)
    def any_signal(self, name: str, args: Sequence[RawValue]) -> None:
        self.signals.append(name)

    @workflow.signal
    def finish(self) -> None:
        self.done = True

    @workflow.query
    def received(self) -> list[str]:
        return self.signals
