"""The force-end rule: only playing, only once the current level is old enough."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import DomainError, ErrorCode
from domain.operations import FORCE_END_MIN_LEVEL_AGE_MS, can_force_end, verify_force_end

STATES = ["registering", "starting", "playing", "ended", "settling", "closed", "cancelled"]


@given(
    state=st.sampled_from(STATES),
    started=st.integers(min_value=0, max_value=10**13),
    age=st.integers(min_value=-(10**6), max_value=10**7),
    threshold=st.integers(min_value=0, max_value=10**7),
)
def test_allowed_exactly_when_playing_and_level_old_enough(
    state: str, started: int, age: int, threshold: int
) -> None:
    allowed = can_force_end(state, started, started + age, min_level_age_ms=threshold)
    assert allowed == (state == "playing" and max(age, 0) >= threshold)


def test_the_seed_threshold_is_five_minutes() -> None:
    assert FORCE_END_MIN_LEVEL_AGE_MS == 300_000
    assert not can_force_end("playing", 0, 299_999)
    assert can_force_end("playing", 0, 300_000)


@pytest.mark.parametrize(
    ("state", "started", "now"),
    [("settling", 0, 10**9), ("playing", None, 10**9), ("playing", 10**9, 10**9 + 1)],
)
def test_refusals_are_invalid_state(state: str, started: int | None, now: int) -> None:
    with pytest.raises(DomainError) as err:
        verify_force_end(state, started, now)
    assert err.value.code is ErrorCode.INVALID_STATE
