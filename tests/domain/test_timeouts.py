"""The decision-timeout rules (seed 004, "Decision timeouts"), pure."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from domain.holdem import ActionKind
from domain.holdem.timeouts import SIT_OUT_AFTER, disconnect_grace_left, timeout_penalty


@given(consecutive=st.integers(min_value=1, max_value=50), can_check=st.booleans())
def test_only_a_first_timeout_with_a_free_check_checks(consecutive: int, can_check: bool) -> None:
    penalty = timeout_penalty(consecutive, can_check=can_check)
    checks = consecutive < SIT_OUT_AFTER and can_check
    assert penalty.action is (ActionKind.CHECK if checks else ActionKind.FOLD)
    assert penalty.sits_out is (consecutive >= SIT_OUT_AFTER)


def test_the_second_timeout_in_a_row_folds_where_a_check_is_free() -> None:
    assert SIT_OUT_AFTER == 2
    second = timeout_penalty(2, can_check=True)
    assert (second.action, second.sits_out) == (ActionKind.FOLD, True)


def test_the_disconnect_grace_runs_from_the_drop() -> None:
    """Seed 004: a dropped stream gets ``disconnectGrace`` from the drop; an open one none."""
    assert disconnect_grace_left(60, None) == 0  # connected: the timeout rules apply now
    assert disconnect_grace_left(60, 0) == 60
    assert disconnect_grace_left(60, 45.5) == 14.5
    assert disconnect_grace_left(60, 60) == 0 and disconnect_grace_left(60, 600) == 0
    assert disconnect_grace_left(0, 1) == 0  # a tournament without a grace
    assert disconnect_grace_left(30, -2) == 30  # a drop stamped a little ahead of the reader
