"""A worker process whose deck draw never returns, for a test to SIGKILL mid-draw
(tests/integration/test_deck_draw.py). Run as ``python -m tests.integration.stalled_draw_worker
ADDRESS TASK_QUEUE DATABASE_URL STARTED_FILE``: it writes STARTED_FILE once a draw began."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from temporalio import activity
from temporalio.worker import Worker

from activities.act_writer import ActWriter
from activities.table import new_deck_seed
from core import deck_vault
from core.settings import Settings
from core.temporal import connect
from db.engine import Database
from wire.table_messages import DeckDraw
from worker import WORKFLOWS, activities_for, single_batch


async def main(address: str, task_queue: str, database_url: str, started: Path) -> None:
    settings = Settings(
        env="test",
        temporal_address=address,
        temporal_task_queue=task_queue,
        database_url=database_url,
    )

    @activity.defn(name="new_deck_seed")
    async def stalled(table_hand: str) -> DeckDraw:
        started.write_text(table_hand)  # noqa: ASYNC240 (a test's marker file)
        await asyncio.Event().wait()  # until the process is killed
        raise AssertionError("unreachable")

    client = await connect(settings)
    db = Database(database_url)
    deck_vault.ensure_installed(settings)
    activities = [stalled, *(a for a in activities_for(db) if a is not new_deck_seed)]
    worker = single_batch(
        Worker(
            client,
            task_queue=task_queue,
            workflows=list(WORKFLOWS),
            activities=activities,
            interceptors=[ActWriter(db)],
        )
    )
    await worker.run()


if __name__ == "__main__":
    address, task_queue, database_url, started = sys.argv[1:5]
    asyncio.run(main(address, task_queue, database_url, Path(started)))
