"""Operator actions' rules: when a tournament may be force-ended.

Force-end exists for wedged tournaments (an agent service died, a table stopped dealing). A
tournament that is merely slow is not wedged, so the rule asks for the current level to have
run for a while first (the seed: visible only when state is playing and the level is older
than five minutes). The admin page shows the button by :func:`can_force_end`; the API refuses
by :func:`verify_force_end`; the workflow itself still refuses any state but playing.

>>> can_force_end("playing", level_started_at_ms=0, now_ms=300_000)
True
>>> can_force_end("playing", level_started_at_ms=0, now_ms=299_999)
False
>>> can_force_end("settling", level_started_at_ms=0, now_ms=10**9)
False
"""

from __future__ import annotations

from domain.errors import DomainError, ErrorCode

__all__ = ["FORCE_END_MIN_LEVEL_AGE_MS", "can_force_end", "verify_force_end"]

FORCE_END_MIN_LEVEL_AGE_MS = 5 * 60 * 1000
"""The seed's threshold; deployments may change it (``force_end_min_level_age_seconds``)."""


def verify_playing(state: str) -> None:
    """Only a playing tournament can be force-ended: the rule a tournament re-checks when it
    takes the request (the level age reads the clock, so only its validator checks that).

    >>> verify_playing("playing")
    >>> verify_playing("ended")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: cannot force-end from state 'ended': only a playing tournament
    """
    if state != "playing":
        raise DomainError(
            ErrorCode.INVALID_STATE,
            f"cannot force-end from state '{state}': only a playing tournament",
        )


def verify_force_end(
    state: str,
    level_started_at_ms: int | None,
    now_ms: int,
    *,
    min_level_age_ms: int = FORCE_END_MIN_LEVEL_AGE_MS,
) -> None:
    """Refuse a force-end with ``invalid_state`` and the reason, or return.

    >>> verify_force_end("registering", None, 0)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: cannot force-end from state 'registering': only a playing tournament
    >>> verify_force_end("playing", 1_000, 61_000)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: the current level is 60s old: force-end needs 300s
    """
    verify_playing(state)
    if level_started_at_ms is None:
        # Playing without a level start cannot happen once play began; refuse rather than guess.
        raise DomainError(ErrorCode.INVALID_STATE, "the current level has no start time yet")
    age_ms = max(0, now_ms - level_started_at_ms)
    if age_ms < min_level_age_ms:
        raise DomainError(
            ErrorCode.INVALID_STATE,
            f"the current level is {age_ms // 1000}s old: "
            f"force-end needs {min_level_age_ms // 1000}s",
        )


def can_force_end(
    state: str,
    level_started_at_ms: int | None,
    now_ms: int,
    *,
    min_level_age_ms: int = FORCE_END_MIN_LEVEL_AGE_MS,
) -> bool:
    """Whether :func:`verify_force_end` would accept (the admin page's button rule)."""
    try:
        verify_force_end(state, level_started_at_ms, now_ms, min_level_age_ms=min_level_age_ms)
    except DomainError:
        return False
    return True
