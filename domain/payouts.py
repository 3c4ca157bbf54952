"""The prize pool and its split: basis points per paid place and whole-chip amounts per place.

Two conservation rules hold at every field size and are what the settlement's
"Σ payouts == pool" check inherits: the basis points of a distribution sum to exactly 10,000,
and the amounts sum to exactly the pool. Rounding dust always goes to first place.

>>> payouts_for_field_size(PayoutStructure(), 9)
[5135, 2848, 2017]
>>> payout_amounts([5135, 2848, 2017], 900)
[463, 256, 181]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from pydantic import Field

from domain.errors import DomainError, ErrorCode
from domain.mtt.payouts import mtt_payouts
from domain.settings import PayoutStructure, PrizePlace, StrictWireModel, TournamentSettings

__all__ = [
    "TOTAL_BPS",
    "ResolvedPrizePlace",
    "paid_places",
    "payout_amounts",
    "payouts_for_field_size",
    "prize_pool",
    "resolve_payout_amounts",
    "resolve_payouts",
    "resolved_prize_structure",
]

TOTAL_BPS = 10_000


class ResolvedPrizePlace(StrictWireModel):
    """A resolved place on the wire, for every source: the seed's type
    ``{position: number; share: number}``, the share a percentage of the pool (the places'
    shares sum to 100). ``percent`` is the same number under its old name, served for one
    release beside ``share`` for clients that read it (CHANGELOG.md); it then goes."""

    position: int
    share: float
    percent: float = Field(
        json_schema_extra={"deprecated": True},
        description="Deprecated: the same number as `share`; removed in the next release.",
    )


def _check_field_size(field_size: int, *, most: int | None = None) -> None:
    if field_size < 1 or (most is not None and field_size > most):
        bound = f"1..{most}" if most is not None else ">= 1"
        raise DomainError(
            ErrorCode.INVALID_FIELD_SIZE,
            f"fieldSize must be {bound}, got {field_size}",
            field="fieldSize",
        )


def paid_places(structure: PayoutStructure, field_size: int) -> int:
    """How many places are paid: the percentage of the field, rounded half up, then clamped.

    >>> [paid_places(PayoutStructure(), n) for n in (2, 5, 6, 9, 10)]
    [1, 2, 2, 3, 3]
    """
    _check_field_size(field_size)
    # Exact decimal arithmetic, so 5 × 30% is 1.5 and rounds up rather than drifting down.
    share = field_size * Fraction(repr(structure.paid_places_percent)) / 100
    rounded = math.floor(share + Fraction(1, 2))
    return min(max(structure.min_paid_places, rounded, 1), field_size)


def _dust_to_first(floored: list[int]) -> list[int]:
    # Places 2.. keep their floors; first takes what is left, so the sum is exact by
    # construction and float noise in the shares can never push it past the total.
    return [TOTAL_BPS - sum(floored[1:]), *floored[1:]]


def payouts_for_field_size(structure: PayoutStructure, field_size: int) -> list[int]:
    """Basis points per paid place (index 0 is first place), summing to exactly 10,000.

    Weights are w(p) = p^(−topHeaviness), normalized and floored to basis points. On very
    large fields deep places can floor to 0 bps; they stay in the list so that its length is
    the paid count the formula names.

    >>> [payouts_for_field_size(PayoutStructure(), n) for n in (2, 6, 10)]
    [[10000], [6432, 3568], [5135, 2848, 2017]]
    """
    paid = paid_places(structure, field_size)
    weights = [p ** (-structure.top_heaviness) for p in range(1, paid + 1)]
    total = math.fsum(weights)
    return _dust_to_first([math.floor(TOTAL_BPS * w / total) for w in weights])


def _legacy_bps(places: Sequence[PrizePlace], field_size: int) -> list[int]:
    bps = [math.floor(Fraction(repr(p.percent)) * 100) for p in places]
    # A field smaller than the list cannot fill its deepest places; their shares fold into
    # first place like any other dust rather than rescaling the operator's chosen split.
    return _dust_to_first(bps[:field_size])


def resolve_payouts(settings: TournamentSettings, field_size: int) -> list[int]:
    """Basis points per paid place for a sealed field: the structure, else the legacy list.

    With neither source present the default structure applies (30% paid, τ = 0.85), or for
    an MTT (``maxEntrants`` above ``seats``) the MTT table (``domain/mtt/payouts.py``) on a
    pool of 10,000: its shares; the amounts come from the real pool
    (:func:`resolve_payout_amounts`).
    """
    _check_field_size(field_size, most=settings.field_bound)
    if _mtt_table(settings):
        return mtt_payouts(field_size=field_size, pool=TOTAL_BPS)
    if settings.payout_structure is None and settings.prize_structure is not None:
        return _legacy_bps(settings.prize_structure, field_size)
    return payouts_for_field_size(settings.payout_structure or PayoutStructure(), field_size)


def resolved_prize_structure(
    settings: TournamentSettings, field_size: int
) -> list[ResolvedPrizePlace]:
    """The resolved distribution in the wire's ``{position, share}`` shape (``percent`` too,
    for one release)."""
    return [
        ResolvedPrizePlace(position=i, share=bps / 100, percent=bps / 100)
        for i, bps in enumerate(resolve_payouts(settings, field_size), start=1)
    ]


def prize_pool(settings: TournamentSettings, field_size: int) -> int:
    """The pool from the sealed field, never from seat capacity: (entryFee − rakeFee) × field.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 6, "entryFee": 110, "rakeFee": 10,
    ...     "startingStack": 1500, "actionTimeoutSeconds": 30,
    ...     "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5,
    ...                        "levelDurationSeconds": 300}})
    >>> prize_pool(s, 6), resolve_payout_amounts(s, 6)
    (600, [386, 214])
    """
    _check_field_size(field_size, most=settings.field_bound)
    return (settings.entry_fee - settings.rake_fee) * field_size


def payout_amounts(bps: Sequence[int], pool: int) -> list[int]:
    """Whole-chip amounts per place: each floored, the dust to first, summing to ``pool``.

    >>> payout_amounts([3334, 3333, 3333], 100)
    [34, 33, 33]
    """
    if sum(bps) != TOTAL_BPS or any(b < 0 for b in bps):
        raise ValueError(f"basis points must be >= 0 and sum to {TOTAL_BPS}, got {list(bps)}")
    if pool < 0:
        raise ValueError(f"pool must be >= 0, got {pool}")
    floored = [pool * b // TOTAL_BPS for b in bps]
    return [pool - sum(floored[1:]), *floored[1:]]


def resolve_payout_amounts(settings: TournamentSettings, field_size: int) -> list[int]:
    """Chip amounts per paid place for a sealed field; index 0 is first place.

    An MTT without an operator's source pays the MTT table on its pool, in whole chips.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 6, "maxEntrants": 60, "entryFee": 100,
    ...     "startingStack": 1500, "actionTimeoutSeconds": 30,
    ...     "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5,
    ...                        "levelDurationSeconds": 300}})
    >>> resolve_payout_amounts(s, 60)
    [1819, 953, 682, 551, 474, 425, 389, 363, 344]
    """
    pool = prize_pool(settings, field_size)
    if _mtt_table(settings):
        return mtt_payouts(field_size=field_size, pool=pool)
    return payout_amounts(resolve_payouts(settings, field_size), pool)


def _mtt_table(settings: TournamentSettings) -> bool:
    """An MTT pays the MTT table unless the operator chose a source."""
    return (
        settings.is_mtt and settings.payout_structure is None and settings.prize_structure is None
    )
