"""Golden histories (docs/versioning.md): a tournament played to the end, its table, and a
cash room that dealt a few hands and closed, recorded by an earlier build
(``python -m tests.histories.golden.record``). Today's code must replay each one exactly: a
change that cannot is a change that would break workflows still running, and needs a
``workflow.patched`` branch (or a new recording, announced in the changelog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from core.settings import Settings
from core.temporal import data_converter
from worker import build_replayer

HERE = Path(__file__).parent / "histories" / "golden"
KINDS = ("tournament", "table", "room")


@pytest.mark.parametrize("kind", KINDS)
async def test_todays_code_replays_the_golden_history(kind: str) -> None:
    workflow_id = (HERE / f"{kind}.id").read_text().strip()
    history = WorkflowHistory.from_json(workflow_id, (HERE / f"{kind}.json").read_text())
    assert len(history.events) > 100  # a whole tournament, a whole table, hands in a room
    converter = data_converter(Settings(data_dir=HERE, codec_key=""))
    result = await build_replayer(converter).replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def test_a_divergence_would_be_caught() -> None:
    """The check is not vacuous: the recording holds the commands a replay must match."""
    text = (HERE / "table.json").read_text()
    assert "EVENT_TYPE_TIMER_STARTED" in text and "EVENT_TYPE_MARKER_RECORDED" in text
