"""The level clock: which level is running at an instant, when each level ends, time left.

Both workflows and the API read time through these functions so that there is one owner of
it. Time comes in as epoch milliseconds (``workflow.now()`` in a workflow); nothing here
reads a clock. The clock is deadline-based: level *n* ends at
``play_start + Σ durations[0..n]``, an absolute instant, so a hand boundary re-parks on the
same deadline instead of restarting a timeout (otherwise a table dealing faster than the
level duration would never escalate).

>>> clock = LevelClock(play_start_ms=1_000, level_duration_ms=60_000)
>>> clock.level_at(1_000), clock.level_at(60_999), clock.level_at(61_000)
(0, 0, 1)
>>> clock.deadline_ms(0), clock.deadline_ms(1), clock.time_left_ms(31_000)
(61000, 121000, 30000)
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.settings import TournamentSettings

__all__ = [
    "LevelClock",
    "level_at",
    "level_clock",
    "level_deadline_ms",
    "level_started_at_ms",
    "time_left_ms",
]


@dataclass(frozen=True, slots=True)
class LevelClock:
    """The clock of one tournament: when play started and how long every level lasts.

    Levels are uniform today (the settings carry one duration); the arithmetic below is the
    Σ-of-durations rule specialised to that case, so a per-level schedule would only change
    this class.
    """

    play_start_ms: int
    level_duration_ms: int

    def __post_init__(self) -> None:
        if self.level_duration_ms <= 0:
            raise ValueError(f"level_duration_ms must be > 0, got {self.level_duration_ms}")

    def level_at(self, now_ms: int) -> int:
        """The level running at ``now_ms``; level 0 before play starts, the next one at a deadline.

        A deadline instant belongs to the next level, so ``level_at(deadline_ms(n)) == n + 1``.
        """
        if now_ms <= self.play_start_ms:
            return 0
        return (now_ms - self.play_start_ms) // self.level_duration_ms

    def started_at_ms(self, level: int) -> int:
        """The instant ``level`` began (the previous level's deadline; play start for 0)."""
        _check_level(level)
        return self.play_start_ms + level * self.level_duration_ms

    def deadline_ms(self, level: int) -> int:
        """The absolute instant ``level`` ends: play start + Σ durations[0..level]."""
        _check_level(level)
        return self.play_start_ms + (level + 1) * self.level_duration_ms

    def time_left_ms(self, now_ms: int, level: int | None = None) -> int:
        """Milliseconds until ``level`` ends (default: the level running at ``now_ms``).

        Never negative: a workflow that missed a deadline while its worker was down sees 0
        and escalates at once (the seed's resume-from-boot clamp).
        """
        current = self.level_at(now_ms) if level is None else level
        return max(0, self.deadline_ms(current) - now_ms)


def level_clock(settings: TournamentSettings, play_start_ms: int) -> LevelClock:
    """The clock of a tournament whose play started at ``play_start_ms``."""
    return LevelClock(play_start_ms=play_start_ms, level_duration_ms=settings.level_duration_ms)


def level_at(settings: TournamentSettings, play_start_ms: int, now_ms: int) -> int:
    """The level running at ``now_ms`` for a tournament that started play at ``play_start_ms``."""
    return level_clock(settings, play_start_ms).level_at(now_ms)


def level_started_at_ms(settings: TournamentSettings, play_start_ms: int, level: int) -> int:
    """The instant ``level`` began."""
    return level_clock(settings, play_start_ms).started_at_ms(level)


def level_deadline_ms(settings: TournamentSettings, play_start_ms: int, level: int) -> int:
    """The absolute instant ``level`` ends (the wire's ``levelEndsAt``)."""
    return level_clock(settings, play_start_ms).deadline_ms(level)


def time_left_ms(
    settings: TournamentSettings, play_start_ms: int, now_ms: int, level: int | None = None
) -> int:
    """Milliseconds until ``level`` (default: the level running at ``now_ms``) ends, ≥ 0."""
    return level_clock(settings, play_start_ms).time_left_ms(now_ms, level)


def _check_level(level: int) -> None:
    if level < 0:
        raise ValueError(f"level must be >= 0, got {level}")
