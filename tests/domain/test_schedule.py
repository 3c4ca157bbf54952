"""The schedule preview: open-ended, level durations, deadlines once play has started."""

from __future__ import annotations

import pytest

from domain.schedule import MAX_PREVIEW_LEVELS, schedule_preview
from domain.settings import validate_settings
from tests.domain.builders import valid_settings_dict


def test_preview_is_open_ended_with_durations() -> None:
    preview = schedule_preview(validate_settings(valid_settings_dict()), count=4)
    wire = preview.to_wire()
    assert wire["continues"] is True and wire["totalLevels"] is None
    assert [(lv["level"], lv["sb"], lv["bb"]) for lv in wire["levels"]] == [
        (0, 10, 20),
        (1, 15, 30),
        (2, 25, 50),
        (3, 30, 60),
    ]
    assert {lv["durationMs"] for lv in wire["levels"]} == {300_000}
    assert {lv["endsAt"] for lv in wire["levels"]} == {None}


def test_preview_from_the_current_level_with_deadlines() -> None:
    s = validate_settings(valid_settings_dict())
    preview = schedule_preview(s, from_level=5, count=2, play_start_ms=1_000)
    assert [(lv.level, lv.ends_at) for lv in preview.levels] == [(5, 1_801_000), (6, 2_101_000)]


def test_preview_of_a_legacy_list_runs_past_its_end() -> None:
    raw = valid_settings_dict(
        blindStructure=...,
        levelDurationSeconds=60,
        blindLevels=[{"sb": 10, "bb": 20}, {"sb": 20, "bb": 40}],
    )
    preview = schedule_preview(validate_settings(raw), count=4)
    assert [lv.sb for lv in preview.levels] == [10, 20, 40, 80]


@pytest.mark.parametrize(("from_level", "count"), [(-1, 5), (0, -1), (0, MAX_PREVIEW_LEVELS + 1)])
def test_bad_ranges_are_caller_bugs(from_level: int, count: int) -> None:
    with pytest.raises(ValueError):
        schedule_preview(
            validate_settings(valid_settings_dict()), from_level=from_level, count=count
        )
