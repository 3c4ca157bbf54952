"""The blinds and ante of every level: the parametric structure, the legacy list, and snapping.

:func:`resolve_blinds` is THE lookup every consumer uses (both workflows, the API, the admin
pages, the CLI preview). It never raises for a level ≥ 0: escalation is open-ended, and past
``MAX_BLIND_SMALL`` the level number keeps rising while the values stop growing.

>>> s = BlindStructure(starting_small_blind=10, increase_factor=1.5, level_duration_seconds=60)
>>> [blinds_at_level(s, n).sb for n in range(9)]
[10, 15, 25, 30, 50, 80, 100, 150, 250]
>>> blinds_at_level(s, 10_000)
Blinds(sb=1000000000000, bb=2000000000000, ante=0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from domain.settings import (
    MAX_BLIND_BIG,
    MAX_BLIND_SMALL,
    BlindLevel,
    BlindStructure,
    TournamentSettings,
)

__all__ = [
    "DEFAULT_LEGACY_GROWTH",
    "MAX_BLIND_BIG",
    "MAX_BLIND_SMALL",
    "NICE_MANTISSAS",
    "Blinds",
    "blinds_at_level",
    "legacy_blinds_at_level",
    "resolve_blinds",
    "round_to_nice_blind",
]

NICE_MANTISSAS: tuple[Fraction, ...] = tuple(
    Fraction(m) for m in ("1", "1.5", "2", "2.5", "3", "4", "5", "6", "8")
)
# Below 10 the fractional mantissas (1.5, 2.5) are not whole chips, so they drop out.
_NICE_UNDER_TEN: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10)

# A one-level legacy list shows no growth ratio; it grows like a standard structure instead of
# stalling forever (seed: "growth applies only where no ratio is observable").
DEFAULT_LEGACY_GROWTH = Fraction(3, 2)

# Digits carried by the growth arithmetic. Tie points (22.5, 175, ...) have few digits and are
# met exactly; a 60-digit product cannot be mistaken for one by rounding.
_PRECISION = 60
# log10 headroom over the cap: beyond it the raw value is surely above the cap, and since the
# cap is itself a nice value, so is its snap. This keeps huge level numbers from overflowing.
_CAP_LOG10_HEADROOM = 0.01


@dataclass(frozen=True, slots=True)
class Blinds:
    """The forced bets of one level, in chips: small blind, big blind, per-player ante."""

    sb: int
    bb: int
    ante: int = 0


def round_to_nice_blind(x: int | float | Fraction | Decimal) -> int:
    """Snap a raw blind to the nearest clean denomination, ties rounding up.

    The denominations are m × 10^k for m ∈ {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8} and k ≥ 1, plus the
    whole-chip values {1, 2, 3, 4, 5, 6, 8} below 10; anything at or below 1 is one chip.

    >>> [round_to_nice_blind(x) for x in (22.5, 33.75, 12.5, 7, 7.5, 1.5, 0.2, 95_000)]
    [25, 30, 15, 8, 8, 2, 1, 100000]
    """
    value = Fraction(x)
    if value <= 1:
        return 1
    if value < 10:
        candidates = [Fraction(c) for c in _NICE_UNDER_TEN]
    else:
        scale = 10 ** (len(str(math.floor(value))) - 1)
        candidates = [m * scale for m in NICE_MANTISSAS] + [Fraction(10 * scale)]
    # min by (distance, -candidate): the nearest, and on a tie the larger one.
    best = min(candidates, key=lambda c: (abs(value - c), -c))
    return int(best)


def _grown(base: int, factor: Fraction | float, steps: int, cap: int) -> int:
    """``base × factor^steps`` snapped, never below ``base`` and never above ``cap``.

    The raw geometric value is snapped, never a previously snapped one, so rounding does not
    compound. Flooring at ``base`` keeps a non-nice verbatim start from being undercut by its
    own snapped successor (start 12 × 1.01 would otherwise snap down to 10).
    """
    if steps == 0 or base == 0 or factor == 1:
        return min(base, cap)
    exact_factor = Fraction(repr(factor)) if isinstance(factor, float) else factor
    if math.log10(base) + steps * math.log10(exact_factor) > math.log10(cap) + (
        _CAP_LOG10_HEADROOM
    ):
        return cap
    with localcontext(prec=_PRECISION):
        ratio = Decimal(exact_factor.numerator) / Decimal(exact_factor.denominator)
        raw = Decimal(base) * ratio**steps
    return min(cap, max(base, round_to_nice_blind(raw)))


def blinds_at_level(structure: BlindStructure, level: int) -> Blinds:
    """The blinds of ``level`` under a parametric structure; level 0 honors the start verbatim.

    >>> s = BlindStructure(starting_small_blind=25, increase_factor=2.0,
    ...                    level_duration_seconds=60, ante_start_level=2, starting_ante=5,
    ...                    ante_increase_factor=1.5)
    >>> [blinds_at_level(s, n) for n in (0, 1, 2, 3)]  # doctest: +NORMALIZE_WHITESPACE
    [Blinds(sb=25, bb=50, ante=0), Blinds(sb=50, bb=100, ante=0),
     Blinds(sb=100, bb=200, ante=5), Blinds(sb=200, bb=400, ante=8)]
    """
    _check_level(level)
    sb = _grown(structure.starting_small_blind, structure.increase_factor, level, MAX_BLIND_SMALL)
    start = structure.ante_start_level
    if start is None or level < start:
        ante = 0
    else:
        ante = _grown(
            structure.starting_ante, structure.ante_increase_factor, level - start, MAX_BLIND_SMALL
        )
    return Blinds(sb=sb, bb=2 * sb, ante=ante)


def legacy_blinds_at_level(levels: list[BlindLevel], level: int) -> Blinds:
    """The blinds of ``level`` under a legacy list: verbatim in range, extrapolated past it.

    Past the end each of sb, bb and ante grows from its last value by the last observed
    small-blind ratio, nice-snapped; a list ending in equal levels stays flat.

    >>> L = [BlindLevel(sb=10, bb=20), BlindLevel(sb=20, bb=40, ante=5)]
    >>> [legacy_blinds_at_level(L, n) for n in (1, 2, 3)]  # doctest: +NORMALIZE_WHITESPACE
    [Blinds(sb=20, bb=40, ante=5), Blinds(sb=40, bb=80, ante=10),
     Blinds(sb=80, bb=150, ante=20)]
    """
    _check_level(level)
    if level < len(levels):
        row = levels[level]
        return Blinds(sb=row.sb, bb=row.bb, ante=row.ante or 0)
    last = levels[-1]
    ratio = Fraction(last.sb, levels[-2].sb) if len(levels) >= 2 else DEFAULT_LEGACY_GROWTH
    steps = level - (len(levels) - 1)
    return Blinds(
        sb=_grown(last.sb, ratio, steps, MAX_BLIND_SMALL),
        bb=_grown(last.bb, ratio, steps, MAX_BLIND_BIG),
        ante=_grown(last.ante or 0, ratio, steps, MAX_BLIND_SMALL),
    )


def resolve_blinds(settings: TournamentSettings, level: int) -> Blinds:
    """The blinds of ``level``: the structure when present, else the legacy list.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 2, "entryFee": 10, "startingStack": 1000,
    ...     "actionTimeoutSeconds": 30, "levelDurationSeconds": 60,
    ...     "blindLevels": [{"sb": 10, "bb": 20}, {"sb": 10, "bb": 20}]})
    >>> resolve_blinds(s, 1_000_000)
    Blinds(sb=10, bb=20, ante=0)
    """
    if settings.blind_structure is not None:
        return blinds_at_level(settings.blind_structure, level)
    assert settings.blind_levels is not None  # validation demands one of the two
    return legacy_blinds_at_level(settings.blind_levels, level)


def _check_level(level: int) -> None:
    # A negative level is a caller bug, not bad user input, so it is a plain ValueError.
    if level < 0:
        raise ValueError(f"level must be >= 0, got {level}")
