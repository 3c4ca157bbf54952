"""The read store for what finished before it existed (docs/read-model.md, "Upgrading").

A table or tournament whose workflow finished before the pushed read model was released never
published: its game state had nothing to serve (``503`` for ever). On the first read that
finds nothing, after the usual wait for a table that just started, the API asks the workflows
once (a query each) and, if they have finished, writes what they answer to the store, so no
later read, on any replica, asks again. A table still running is left alone: it publishes at
its next decision under the new code, with its seats' private parts, which a query's
spectator view does not carry.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from api.read_model import WORKFLOW_QUERIES
from db.engine import Database
from db.readstore import write_state
from workflows.table import TableWorkflow
from workflows.tournament import TournamentWorkflow

CLOSED = ("closed", "cancelled")


class Backfill:
    def __init__(self, client: Client, db: Database) -> None:
        self.client = client
        self.db = db

    async def __call__(self, table_key: str, tournament_key: str | None) -> bool:
        """Write the finished table (and its finished tournament) to the store; False when
        there is nothing finished to write (or the workflows cannot be read)."""
        try:
            WORKFLOW_QUERIES.labels(workflow="table_backfill").inc()
            table_handle: WorkflowHandle[Any, Any] = self.client.get_workflow_handle_for(
                TableWorkflow.run, table_key
            )
            table = await table_handle.query(TableWorkflow.view, None)
            tournament = None
            if tournament_key is not None:
                WORKFLOW_QUERIES.labels(workflow="tournament_backfill").inc()
                handle: WorkflowHandle[Any, Any] = self.client.get_workflow_handle_for(
                    TournamentWorkflow.run, tournament_key
                )
                tournament = await handle.query(TournamentWorkflow.state)
        except (RPCError, WorkflowQueryFailedError):
            return False
        if not table.finished or (tournament is not None and tournament.state not in CLOSED):
            return False
        async with self.db.session() as session:
            await write_state(
                session,
                key=table_key,
                kind="room" if table.room else "table",
                version=table.version,
                public={"view": table.model_dump(mode="json"), "legal": None},
            )
            if tournament is not None:
                await write_state(
                    session,
                    key=tournament_key or "",
                    kind="tournament",
                    version=tournament.version,
                    public={"view": tournament.model_dump(mode="json")},
                )
            await session.commit()
        return True
