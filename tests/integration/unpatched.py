"""A tournament build that cannot replay today's histories (for tests/integration/test_wedged.py).

Its own module, so the workflow sandbox imports only this and the workflow code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from wire.messages import CreateTournamentInput, TournamentView
    from workflows.tournament import TournamentWorkflow


@workflow.defn(name="TournamentWorkflow")
class ReleasedWithoutAPatch(TournamentWorkflow):
    @workflow.run
    async def run(self, inp: CreateTournamentInput) -> TournamentView:
        await workflow.sleep(timedelta(milliseconds=1))  # a command the history never had
        return await super().run(inp)
