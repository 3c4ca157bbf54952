"""Golden histories (docs/versioning.md): a tournament played to the end, its table, and a
cash room that dealt a few hands and closed, recorded by earlier builds
(``python -m tests.histories.golden.record``): ``golden/`` before card commitments,
``golden/v2/`` with committed decks sealed under a deck key (kept beside the codec key). Today's code must replay each one exactly: a
change that cannot is a change that would break workflows still running, and needs a
``workflow.patched`` branch (or a new recording, announced in the changelog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from core import deck_vault
from core.settings import Settings
from core.temporal import data_converter
from worker import build_replayer

GOLDEN = Path(__file__).parent / "histories" / "golden"
KINDS = ("tournament", "table", "room")
BUILDS = [GOLDEN, *(p for p in (GOLDEN / "v2",) if (p / "codec.key").exists())]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("here", BUILDS, ids=lambda p: p.name)
async def test_todays_code_replays_the_golden_history(here: Path, kind: str) -> None:
    workflow_id = (here / f"{kind}.id").read_text().strip()
    history = WorkflowHistory.from_json(workflow_id, (here / f"{kind}.json").read_text())
    assert len(history.events) > 100  # a whole tournament, a whole table, hands in a room
    # Recorded before activities had a binding of their own: the migration switch reads them.
    converter = data_converter(Settings(data_dir=here, codec_key="", codec_accept_unbound=True))
    session = deck_vault.current()
    if (here / deck_vault.DEV_KEY_FILE).exists():  # its decks open under the recording's key
        deck_vault.install(deck_vault.DeckVault.from_settings(Settings(data_dir=here, deck_key="")))
    try:
        replayer = build_replayer(converter)
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    finally:
        deck_vault.install(session)
    assert result.replay_failure is None, result.replay_failure


def test_a_divergence_would_be_caught() -> None:
    """The check is not vacuous: the recording holds the commands a replay must match."""
    text = (GOLDEN / "table.json").read_text()
    assert "EVENT_TYPE_TIMER_STARTED" in text and "EVENT_TYPE_MARKER_RECORDED" in text
