"""The level clock: absolute deadlines, the level at an instant, time left."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.clock import (
    LevelClock,
    level_at,
    level_clock,
    level_deadline_ms,
    level_started_at_ms,
    time_left_ms,
)
from domain.settings import validate_settings
from tests.domain.builders import valid_settings_dict

START = 1_700_000_000_000  # an epoch-ms play start


def test_settings_drive_the_clock_with_the_structures_duration() -> None:
    s = validate_settings(valid_settings_dict(levelDurationSeconds=30))  # structure says 300
    assert level_clock(s, START) == LevelClock(START, 300_000)
    assert level_deadline_ms(s, START, 0) == START + 300_000
    assert level_deadline_ms(s, START, 2) == START + 900_000
    assert level_started_at_ms(s, START, 2) == START + 600_000
    assert level_at(s, START, START + 299_999) == 0
    assert level_at(s, START, START + 300_000) == 1
    assert time_left_ms(s, START, START + 100_000) == 200_000


def test_before_play_starts_it_is_level_zero() -> None:
    clock = LevelClock(START, 60_000)
    assert clock.level_at(START - 5_000) == 0
    assert clock.time_left_ms(START - 5_000) == 65_000


def test_a_missed_deadline_leaves_no_negative_time() -> None:
    clock = LevelClock(START, 60_000)
    # A workflow still on level 0 long after its deadline escalates at once.
    assert clock.time_left_ms(START + 500_000, level=0) == 0


def test_hand_boundaries_do_not_move_the_deadline() -> None:
    clock = LevelClock(START, 60_000)
    deadlines = {clock.deadline_ms(clock.level_at(t)) for t in range(START, START + 60_000, 7_000)}
    assert deadlines == {START + 60_000}


def test_bad_inputs_are_caller_bugs() -> None:
    with pytest.raises(ValueError):
        LevelClock(START, 0)
    with pytest.raises(ValueError):
        LevelClock(START, 1_000).deadline_ms(-1)


@given(
    st.integers(min_value=0, max_value=2**41),
    st.integers(min_value=1, max_value=10**7),
    st.integers(min_value=0, max_value=2**42),
)
def test_the_running_level_brackets_now(start: int, duration: int, now: int) -> None:
    clock = LevelClock(start, duration)
    level = clock.level_at(now)
    if now >= start:
        assert clock.started_at_ms(level) <= now < clock.deadline_ms(level)
        assert 0 < clock.time_left_ms(now) <= duration
    assert clock.level_at(clock.deadline_ms(level)) == level + 1
