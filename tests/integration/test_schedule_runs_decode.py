"""A scheduled run's start carries the previous run's result (Temporal's last completion
result), sealed for the previous run's workflow id: each reconciler run refused it, and the
worker logged "codec refused a payload" every 30 s on ``sng dev``, where a real refusal would
drown (issue 41's loose end). Runs of one schedule now open each other's payloads, and
nothing else does (tests/test_codec.py); the log shows only real refusals.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from tests.integration.helpers import eventually
from worker import ensure_reconciler_schedule


async def test_consecutive_scheduled_sweeps_log_no_refusal(
    client: Client, worker: Worker, task_queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    schedule_id = f"test-decode-{uuid.uuid4().hex[:8]}"
    schedule = await ensure_reconciler_schedule(client, task_queue, schedule_id=schedule_id)
    try:
        await schedule.pause(note="the test triggers every sweep itself")
        caplog.set_level(logging.WARNING, logger="core.codec")
        for n in range(1, 4):
            await schedule.trigger()

            async def done(n: int = n) -> bool:
                info = (await schedule.describe()).info
                return len(info.recent_actions) >= n and not info.running_actions

            await eventually(done, limit=30)
            await asyncio.sleep(0.2)
        refused = [r for r in caplog.records if "codec refused" in r.getMessage()]
        assert refused == [], [r.getMessage() for r in refused]
    finally:
        await schedule.delete()
