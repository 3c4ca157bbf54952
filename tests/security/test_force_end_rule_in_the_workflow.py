"""Architecture review (rules with several owners): the force-end level-age rule lived only in
the API, so an operator with Temporal access (the UI's "Send Update", the CLI) force-ended a
tournament whose level had just begun. The workflow refuses it now, whoever sends it."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from db.engine import Database
from tests.integration.helpers import eventually, heads_up, start_paid_tournament
from wire.messages import ForceEndInput, TournamentPhase
from workflows.tournament import TournamentWorkflow

SETTINGS = heads_up()


async def _playing(client: Client, db: Database, task_queue: str, **options: object) -> object:
    tid = f"fe-{uuid.uuid4().hex[:8]}"
    handle = await start_paid_tournament(
        client, db, task_queue, tid, SETTINGS, hand_pause_ms=0, **options
    )

    async def playing() -> bool | None:
        view = await handle.query(TournamentWorkflow.state)
        return True if view.state is TournamentPhase.PLAYING else None

    await eventually(playing, limit=30)
    return handle


async def test_a_force_end_sent_straight_to_temporal_meets_the_level_age_rule(
    client: Client, db: Database, task_queue: str, worker: Worker
) -> None:
    handle = await _playing(client, db, task_queue)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(TournamentWorkflow.force_end, ForceEndInput())  # type: ignore[attr-defined]
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "invalid_state", cause
    assert "force-end needs 300s" in str(cause), cause
    view = await handle.query(TournamentWorkflow.state)  # type: ignore[attr-defined]
    assert view.state is TournamentPhase.PLAYING  # nothing changed


async def test_a_deployment_that_allows_it_at_once_can_force_end_at_once(
    client: Client, db: Database, task_queue: str, worker: Worker
) -> None:
    handle = await _playing(client, db, task_queue, force_end_min_level_age_seconds=0)
    view = await handle.execute_update(TournamentWorkflow.force_end, ForceEndInput())  # type: ignore[attr-defined]
    assert view.state is not TournamentPhase.PLAYING
