"""Golden histories (docs/versioning.md): a tournament played to the end, its table, and a
cash room that dealt a few hands and closed, recorded by earlier builds
(``python -m tests.histories.golden.record``): ``golden/`` before card commitments,
``golden/v2/`` with committed decks sealed under a deck key (kept beside the codec key),
``golden/v3/`` taking the new side of every patch, ``golden/v4/`` likewise with
``deliver-v1``, ``golden/v5/`` with ``decision-timer-kept-v1``, and ``golden/v6/`` (a
tournament only) with ``read-model-deltas-v1``, ``golden/v7/`` (a tournament only) with
``level-rearm-v1`` (``PATCHES``: each history
of the newest set must carry the marker of each patch listed for it, so the set cannot
silently lose coverage). Today's code
must replay each one exactly: a change that cannot is a change that would break workflows
still running, and needs a ``workflow.patched`` branch (or a new recording, announced in the
changelog)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from core import deck_vault
from core.settings import Settings
from core.temporal import data_converter
from worker import build_replayer

GOLDEN = Path(__file__).parent / "histories" / "golden"
KINDS = ("tournament", "table", "room")
BUILDS = [
    GOLDEN,
    *(
        p
        for p in (
            GOLDEN / "v2",
            GOLDEN / "v3",
            GOLDEN / "v4",
            GOLDEN / "v5",
            GOLDEN / "v6",
            GOLDEN / "v7",
            GOLDEN / "v8",
        )
        if (p / "codec.key").exists()
    ),
]
"""A build may record some kinds only (``golden/v6/``: the tournament, for
``read-model-deltas-v1``, under v5's keys); each kind's newest is the last build that has it."""
RECORDED = [(here, kind) for here in BUILDS for kind in KINDS if (here / f"{kind}.json").exists()]
NEWEST = {kind: [here for here, k in RECORDED if k == kind][-1] for kind in KINDS}

# The patches whose new side each history of the newest set takes (docs/versioning.md lists every id). A patch
# added to workflows/ belongs here, and in a new recording, before a refactor leans on replay.
_HAND_LOOP = {
    "timeout-fold-v1",
    "stream-grace-v1",
    "deck-local-v1",
    "deck-key-v1",
    "deck-v2",
    "read-model-v1",
    "record-players-v1",
    "legal-once-v1",
    "decision-timer-kept-v1",
    "grace-budget-v1",
}
PATCHES: dict[str, set[str]] = {
    "tournament": {
        "registration-loop-v1",
        "reports-v2",
        "lifecycle-live-v1",
        "standings-checked-v1",
        "read-model-deltas-v1",
        "level-rearm-v1",
        "money-activity-ids-v1",
    },
    # A room asks none of these three (it always delivered its answers: ``deliver-v1``).
    "table": _HAND_LOOP | {"stop-at-waits-v1", "act-answers-v1", "deliver-v1"},
    "room": _HAND_LOOP,
    # Asked by an MTT only (the first two at each run's start, the third when a run in the
    # late-registration window spends its budget); the golden sets have no MTT (their tournament
    # is a Sit-and-Go, which never asks it), so no golden history carries it. An MTT's
    # histories on its new side are replayed by tests/integration/test_mtt.py; its old side
    # is the code before it, unchanged (docs/versioning.md).
    # Asked by the payout reconciler's sweeps (it asks money-activity-ids-v1 too); no golden
    # set records a sweep: tests/integration/test_reconciler.py replays its histories.
    "reconciler": {"sweep-closes-v1"},
    "mtt": {
        "h4h-places-v1",
        "mtt-events-v1",
        "late-handover-v1",
        "busts-by-seat-v1",
        "entry-wallets-v1",
    },
}


def patch_markers(history_json: str) -> set[str]:
    """The ids of the patch markers a recorded history carries (``workflow.patched`` that
    answered True wrote one; a run on the old side of a patch has none)."""
    found = set()
    for event in json.loads(history_json)["events"]:
        marker = event.get("markerRecordedEventAttributes")
        if marker and marker["markerName"] == "core_patch":
            payload = marker["details"]["patch-data"]["payloads"][0]["data"]
            found.add(json.loads(base64.b64decode(payload))["id"])
    return found


@pytest.mark.parametrize(("here", "kind"), RECORDED, ids=lambda v: getattr(v, "name", v))
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


@pytest.mark.parametrize("kind", KINDS)
def test_the_newest_histories_take_the_new_side_of_every_patch(kind: str) -> None:
    carried = patch_markers((NEWEST[kind] / f"{kind}.json").read_text())
    assert PATCHES[kind] <= carried, f"{kind}: no marker of {sorted(PATCHES[kind] - carried)}"


def test_the_check_refuses_a_history_on_the_old_side() -> None:
    """The check can fail: v2's table was recorded before most of these patches, and v3's
    before ``deliver-v1``."""
    carried = patch_markers((GOLDEN / "v2" / "table.json").read_text())
    assert {"deck-v2", "stop-at-waits-v1"} <= carried
    assert not {"deck-local-v1", "legal-once-v1", "act-answers-v1"} & carried
    assert "deliver-v1" not in patch_markers((GOLDEN / "v3" / "table.json").read_text())


def test_every_patch_in_the_workflows_is_listed() -> None:
    """A new ``*_PATCH = "..."`` in workflows/ fails here until it is listed in ``PATCHES``
    (and the newest recording carries it)."""
    declared = {
        m.group(1)
        for path in (Path(__file__).parents[1] / "workflows").rglob("*.py")
        for m in re.finditer(r'^[A-Z_]+_PATCH = "([^"]+)"', path.read_text(), re.M)
    }
    assert declared, "no patch constant found: the pattern no longer matches the code"
    assert declared <= set().union(*PATCHES.values()), sorted(
        declared - set().union(*PATCHES.values())
    )
