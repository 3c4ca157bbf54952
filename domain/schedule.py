"""The schedule preview: the next K levels with their durations, marked open-ended.

The seed's ``tournamentSchedule`` is a preview, not a list that runs out: blinds keep rising
until the tournament ends, so the preview always says ``continues: true`` ("…and it
continues") and ``totalLevels: null``.

>>> from domain.settings import BlindStructure
>>> s = BlindStructure(starting_small_blind=10, increase_factor=2.0, level_duration_seconds=60)
>>> preview = structure_preview(s, count=2)
>>> preview.to_wire()  # doctest: +NORMALIZE_WHITESPACE
{'levels': [{'level': 0, 'sb': 10, 'bb': 20, 'ante': 0, 'durationMs': 60000, 'endsAt': None},
            {'level': 1, 'sb': 20, 'bb': 40, 'ante': 0, 'durationMs': 60000, 'endsAt': None}],
 'continues': True, 'totalLevels': None}
"""

from __future__ import annotations

from collections.abc import Callable

from domain.blinds import Blinds, blinds_at_level, resolve_blinds
from domain.clock import LevelClock
from domain.settings import BlindStructure, StrictWireModel, TournamentSettings

__all__ = [
    "DEFAULT_PREVIEW_LEVELS",
    "MAX_PREVIEW_LEVELS",
    "SchedulePreview",
    "ScheduledLevel",
    "schedule_preview",
    "structure_preview",
]

DEFAULT_PREVIEW_LEVELS = 10
# A preview is for reading; a request for millions of rows is a mistake, not a schedule.
MAX_PREVIEW_LEVELS = 1_000


class ScheduledLevel(StrictWireModel):
    """One previewed level; ``endsAt`` (epoch ms) is known only once play has started."""

    level: int
    sb: int
    bb: int
    ante: int
    duration_ms: int
    ends_at: int | None = None


class SchedulePreview(StrictWireModel):
    """The next levels of an open-ended schedule."""

    levels: list[ScheduledLevel]
    continues: bool = True
    total_levels: None = None


def _preview(
    blinds_of: Callable[[int], Blinds],
    duration_ms: int,
    from_level: int,
    count: int,
    play_start_ms: int | None,
) -> SchedulePreview:
    if from_level < 0 or not 0 <= count <= MAX_PREVIEW_LEVELS:
        raise ValueError(f"need from_level >= 0 and 0 <= count <= {MAX_PREVIEW_LEVELS}")
    clock = None if play_start_ms is None else LevelClock(play_start_ms, duration_ms)
    levels = []
    for n in range(from_level, from_level + count):
        b = blinds_of(n)
        levels.append(
            ScheduledLevel(
                level=n,
                sb=b.sb,
                bb=b.bb,
                ante=b.ante,
                duration_ms=duration_ms,
                ends_at=None if clock is None else clock.deadline_ms(n),
            )
        )
    return SchedulePreview(levels=levels)


def schedule_preview(
    settings: TournamentSettings,
    *,
    from_level: int = 0,
    count: int = DEFAULT_PREVIEW_LEVELS,
    play_start_ms: int | None = None,
) -> SchedulePreview:
    """Levels ``from_level`` .. ``from_level + count - 1`` of a tournament's schedule.

    Pass ``play_start_ms`` once play has started to fill in each level's ``endsAt``.
    """
    return _preview(
        lambda n: resolve_blinds(settings, n),
        settings.level_duration_ms,
        from_level,
        count,
        play_start_ms,
    )


def structure_preview(
    structure: BlindStructure, *, from_level: int = 0, count: int = DEFAULT_PREVIEW_LEVELS
) -> SchedulePreview:
    """The same preview for a bare structure, before any tournament exists (operator CLI)."""
    return _preview(
        lambda n: blinds_at_level(structure, n),
        structure.level_duration_seconds * 1000,
        from_level,
        count,
        None,
    )
