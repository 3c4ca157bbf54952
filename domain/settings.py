"""The tournament settings schema (the seed's sngTableSettingsSchema) and its validation.

On the wire every field keeps the seed system's camelCase name (``entryFee``,
``blindStructure.increaseFactor``); inside Python the same models read in snake_case. Invalid
settings are refused once, at creation, by :func:`validate_settings`, with a
:class:`~domain.errors.DomainError` whose ``field`` is the wire path of the first fault
(``blindStructure.increaseFactor``, ``blindLevels[2].bb``).

>>> s = validate_settings({
...     "seats": 6, "entryFee": 100, "startingStack": 1500, "actionTimeoutSeconds": 30,
...     "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5,
...                        "levelDurationSeconds": 300},
... })
>>> (s.seats, s.rake_fee, s.kind, s.level_duration_ms)
(6, 0, <TableKind.OPEN: 'open'>, 300000)
>>> validate_settings({"seats": 11})
Traceback (most recent call last):
...
domain.errors.DomainError: seats: Input should be less than or equal to 10
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from domain.errors import DomainError, ErrorCode

# A safety plateau, not a last level: escalation keeps counting levels, values stop growing, so
# a stalled-but-clocked table can never push unsafe numbers onto the wire (seed: resolveBlinds).
MAX_BLIND_SMALL = 10**12
MAX_BLIND_BIG = 2 * MAX_BLIND_SMALL
# Chip and money amounts stay far enough below 2**63 that a full table's total (10 seats) still
# fits a PostgreSQL BIGINT column.
MAX_CHIPS = 10**15

DEFAULT_DISCONNECT_GRACE = 60
"""The seed's ``disconnectGrace`` at its default (normal) speed; turbo's is 30, slow's 300."""
MAX_DISCONNECT_GRACE = 300
"""The seed's longest ``disconnectGrace`` (slow)."""

MIN_SEATS = 2
MAX_SEATS = 10
MAX_ENTRANTS = 10_000
"""The largest field a tournament may set (``maxEntrants``): issue 31's 10,000-entrant MTT."""

Chips = Annotated[int, Field(strict=True)]
Factor = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class TableKind(StrEnum):
    """Who may register: the same four audiences as cash tables (seed: Audiences)."""

    OPEN = "open"
    HUMAN_ONLY = "human_only"
    AGENT = "agent"
    COPILOT = "copilot"


class StrictWireModel(BaseModel):
    """camelCase on the wire, snake_case in Python, immutable, unknown fields refused: what a
    client sends to configure something (settings) and the domain's own value types. The
    workflows' messages use ``wire.messages.WireModel`` (mutable, unknown fields ignored, so
    a history written by a newer version still reads).

    Unknown fields are refused so that a misspelt ``levelDurationSecond`` is an error at
    creation rather than a silently ignored setting.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid"
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase keys)."""
        return self.model_dump(mode="json", by_alias=True)


WireT = TypeVar("WireT", bound=StrictWireModel)


class BlindStructure(StrictWireModel):
    """The parametric, open-ended blind schedule: every level is a formula of its number."""

    starting_small_blind: Annotated[Chips, Field(ge=1, le=MAX_BLIND_SMALL)]
    increase_factor: Annotated[Factor, Field(ge=1.01)]
    level_duration_seconds: Annotated[Chips, Field(ge=30)]
    ante_start_level: Annotated[Chips, Field(ge=0)] | None = None
    starting_ante: Annotated[Chips, Field(ge=0, le=MAX_BLIND_SMALL)] = 0
    ante_increase_factor: Annotated[Factor, Field(ge=1)] = 1.0


class BlindLevel(StrictWireModel):
    """One level of a legacy ``blindLevels[]`` list, honored verbatim while in range."""

    sb: Annotated[Chips, Field(ge=1, le=MAX_BLIND_SMALL)]
    bb: Annotated[Chips, Field(ge=1, le=MAX_BLIND_BIG)]
    ante: Annotated[Chips, Field(ge=0, le=MAX_BLIND_SMALL)] | None = None


class PayoutStructure(StrictWireModel):
    """The parametric payout distribution, scaled to the sealed field size."""

    paid_places_percent: Annotated[Factor, Field(ge=0, le=100)] = 30.0
    top_heaviness: Annotated[Factor, Field(ge=0)] = 0.85
    min_paid_places: Annotated[Chips, Field(ge=1)] = 1


class PrizePlace(StrictWireModel):
    """One place of a legacy ``prizeStructure[]``: the explicit, hand-tuned override shape."""

    position: Annotated[Chips, Field(ge=1)]
    percent: Annotated[Factor, Field(gt=0, le=100)]


def _cross_field(field: str, message: str) -> PydanticCustomError:
    # The field rides in the error context so validate_settings can name it even though
    # a model-level check has no location of its own.
    return PydanticCustomError("settings", message, {"field": field})


class TournamentSettings(StrictWireModel):
    """A tournament's settings as sealed at creation (seed: sngTableSettingsSchema)."""

    seats: Annotated[Chips, Field(ge=MIN_SEATS, le=MAX_SEATS)]
    entry_fee: Annotated[Chips, Field(ge=1, le=MAX_CHIPS)]
    rake_fee: Annotated[Chips, Field(ge=0)] = 0
    starting_stack: Annotated[Chips, Field(ge=1, le=MAX_CHIPS)]
    blind_structure: BlindStructure | None = None
    blind_levels: Annotated[list[BlindLevel], Field(min_length=1)] | None = None
    level_duration_seconds: Annotated[Chips, Field(ge=30)] | None = None
    payout_structure: PayoutStructure | None = None
    prize_structure: Annotated[list[PrizePlace], Field(min_length=1)] | None = None
    action_timeout_seconds: Annotated[Chips, Field(ge=3, le=300)]
    disconnect_grace: Annotated[Chips, Field(ge=0, le=MAX_DISCONNECT_GRACE)] = (
        DEFAULT_DISCONNECT_GRACE
    )
    """Seconds a player whose stream dropped has to reconnect before the timeout rules apply,
    measured from the drop (seed 004's ``disconnectGrace``; 0: none)."""
    kind: TableKind = TableKind.OPEN
    # -- the field: a Sit-and-Go (one table, starts when full) or an MTT (docs/mtt.md) --
    max_entrants: Annotated[Chips, Field(ge=MIN_SEATS, le=MAX_ENTRANTS)] | None = None
    """The field's size bound (``maxEntrants``); absent: ``seats``, a Sit-and-Go. Above
    ``seats`` the tournament is an MTT on ``ceil(field / seats)`` tables."""
    min_entrants: Annotated[Chips, Field(ge=MIN_SEATS, le=MAX_ENTRANTS)] | None = None
    """An MTT starts with at least this many paid entries (``minEntrants``); absent: the
    field's bound. A Sit-and-Go starts when full, so it may only name ``seats``."""
    scheduled_start_at: Annotated[Chips, Field(ge=0)] | None = None
    """When an MTT starts (epoch ms, ``scheduledStartAt``): it seals then with the paid
    entries if there are at least ``minEntrants`` (or earlier, when ``maxEntrants`` have
    paid). A Sit-and-Go starts when full and refuses it."""
    late_registration_seconds: Annotated[Chips, Field(ge=0)] = 0
    """Seconds registration stays open into play, from play's start (the seed's reserved
    field): an MTT's late registration (docs/mtt.md, "Late registration and re-entry"); a
    Sit-and-Go refuses it above 0 (its field is full when it starts)."""
    max_re_entries: Annotated[Chips, Field(ge=0)] = 0
    """Re-entries a busted player may make while late registration is open
    (``maxReEntries``): each is a new entry, paying the fee again. Above 0 it needs
    ``lateRegistrationSeconds`` above 0."""
    rebuy_config: None = None

    @model_validator(mode="after")
    def _check_cross_field_rules(self) -> TournamentSettings:
        if self.rake_fee >= self.entry_fee:
            raise _cross_field("rakeFee", "must be less than entryFee")
        if self.blind_structure is None and self.blind_levels is None:
            raise _cross_field("blindStructure", "one of blindStructure or blindLevels is required")
        if self.blind_structure is None and self.level_duration_seconds is None:
            raise _cross_field(
                "levelDurationSeconds",
                "required when blindStructure is absent",
            )
        if self.blind_levels is not None:
            _check_monotonic(self.blind_levels)
        self._check_field()
        if self.prize_structure is not None:
            _check_prize_structure(self.prize_structure, self.field_bound)
        return self

    def _check_field(self) -> None:
        bound = self.field_bound
        if bound < self.seats:
            raise _cross_field("maxEntrants", "must be at least seats (a table's size)")
        if bound > self.seats and self.seats == MIN_SEATS:
            # A field of three on 2-seat tables would sit 2 + 1: a player alone cannot be
            # dealt a hand (domain/mtt/seating.py MIN_MTT_TABLE_SIZE).
            raise _cross_field(
                "maxEntrants", "a multi-table field needs tables of at least 3 seats"
            )
        if self.min_entrants is not None:
            if self.min_entrants > bound:
                raise _cross_field("minEntrants", "must be at most maxEntrants")
            if not self.is_mtt and self.min_entrants != bound:
                raise _cross_field(
                    "minEntrants", "a Sit-and-Go starts when full: only seats is accepted"
                )
        if self.scheduled_start_at is not None and not self.is_mtt:
            raise _cross_field(
                "scheduledStartAt",
                "a Sit-and-Go starts when full: only an MTT (maxEntrants above seats) "
                "has a scheduled start",
            )
        if self.late_registration_seconds and not self.is_mtt:
            raise _cross_field(
                "lateRegistrationSeconds",
                "a Sit-and-Go starts when full: only an MTT (maxEntrants above seats) has "
                "late registration",
            )
        if self.max_re_entries and not self.late_registration_seconds:
            raise _cross_field(
                "maxReEntries",
                "re-entry is only open during late registration: it needs "
                "lateRegistrationSeconds above 0",
            )

    @property
    def field_bound(self) -> int:
        """The most entries the field takes (``maxEntrants``, else ``seats``)."""
        return self.seats if self.max_entrants is None else self.max_entrants

    @property
    def is_mtt(self) -> bool:
        """More entries than one table seats: a multi-table tournament."""
        return self.field_bound > self.seats

    @property
    def field_minimum(self) -> int:
        """The fewest paid entries the tournament starts with (``minEntrants``, else the
        field's bound: a Sit-and-Go starts when full)."""
        return self.field_bound if self.min_entrants is None else self.min_entrants

    @property
    def level_duration_seconds_effective(self) -> int:
        """Seconds per level: the structure's own duration wins (single owner of time)."""
        if self.blind_structure is not None:
            return self.blind_structure.level_duration_seconds
        assert self.level_duration_seconds is not None  # guaranteed by validation
        return self.level_duration_seconds

    @property
    def level_duration_ms(self) -> int:
        """Milliseconds per level, the unit the level clock works in."""
        return self.level_duration_seconds_effective * 1000


def _check_monotonic(levels: list[BlindLevel]) -> None:
    previous: BlindLevel | None = None
    for i, level in enumerate(levels):
        where = f"blindLevels[{i}]"
        if level.bb < level.sb:
            raise _cross_field(f"{where}.bb", "must be at least the level's sb")
        if previous is not None:
            for name in ("sb", "bb", "ante"):
                now, before = getattr(level, name) or 0, getattr(previous, name) or 0
                if now < before:
                    raise _cross_field(
                        f"{where}.{name}",
                        f"blindLevels must be monotonic: {now} is below the previous "
                        f"level's {before}",
                    )
        previous = level


def _check_prize_structure(places: list[PrizePlace], field_bound: int) -> None:
    positions = [p.position for p in places]
    if positions != list(range(1, len(places) + 1)):
        raise _cross_field("prizeStructure", "positions must run 1, 2, 3, ... in order")
    if len(places) > field_bound:
        raise _cross_field(
            "prizeStructure", "cannot pay more places than there are seats (maxEntrants)"
        )
    # Summed as the decimals the operator typed, so 33.3 + 33.3 + 33.4 is exactly 100.
    total = sum((Fraction(repr(p.percent)) for p in places), Fraction(0))
    if total != 100:
        raise _cross_field("prizeStructure", f"percents must sum to 100 (got {float(total):g})")


def _wire_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def validate_wire(model: type[WireT], raw: dict[str, Any]) -> WireT:
    """Parse any wire model, refusing bad input with INVALID_SETTINGS naming the first field.

    >>> validate_wire(PayoutStructure, {"topHeaviness": -1})
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: topHeaviness: Input should be greater than or equal to 0
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        ctx = first.get("ctx") or {}
        field = str(ctx["field"]) if "field" in ctx else _wire_path(tuple(first["loc"]))
        message = f"{field}: {first['msg']}" if field else first["msg"]
        raise DomainError(ErrorCode.INVALID_SETTINGS, message, field=field or None) from None


def validate_settings(raw: dict[str, Any]) -> TournamentSettings:
    """Parse wire settings, or refuse them with INVALID_SETTINGS naming the first bad field.

    >>> validate_settings({"seats": 2, "entryFee": 10, "rakeFee": 10})
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: startingStack: Field required
    """
    return validate_wire(TournamentSettings, raw)
