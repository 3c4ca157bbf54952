"""The create forms: a tournament's (fields, wire settings, previews) and a cash room's.

Inputs are named by their wire path (``blindStructure.increaseFactor``, ``stakes.bigBlind``),
so a :class:`~domain.errors.DomainError` from ``validate_settings`` or ``validate_room`` names
the input to show its message beside. Every number in the previews comes from the same
``domain`` functions the workflows use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from api.services.rooms import CreateRoomBody
from api.services.tournaments import CreateTournamentBody
from domain.errors import DomainError, ErrorCode
from domain.payouts import prize_pool, resolve_payout_amounts, resolve_payouts
from domain.rooms import MAX_SEATS, MIN_SEATS, RoomRules, Speed, validate_room
from domain.schedule import ScheduledLevel, schedule_preview
from domain.settings import TableKind, TournamentSettings, validate_settings

Kind = Literal["int", "float", "text", "select"]


@dataclass(frozen=True)
class FormField:
    name: str
    """The wire path, also the input's name and the key of its error message."""
    label: str
    kind: Kind
    default: str = ""
    hint: str = ""
    optional: bool = False
    options: tuple[str, ...] = ()


FIELDS: tuple[FormField, ...] = (
    FormField("name", "Name", "text", "Sit & Go"),
    FormField("kind", "Audience", "select", "open", options=tuple(k.value for k in TableKind)),
    FormField("seats", "Seats", "int", "6", "2–10"),
    FormField("entryFee", "Entry fee", "int", "100"),
    FormField("rakeFee", "Rake", "int", "0", "below the entry fee"),
    FormField("startingStack", "Starting stack", "int", "1500"),
    FormField("actionTimeoutSeconds", "Action timeout (s)", "int", "30", "3–300"),
    FormField("blindStructure.startingSmallBlind", "Starting small blind", "int", "10"),
    FormField("blindStructure.increaseFactor", "Blind increase factor", "float", "1.5", "≥ 1.01"),
    FormField("blindStructure.levelDurationSeconds", "Level duration (s)", "int", "300", "≥ 30"),
    FormField(
        "blindStructure.anteStartLevel",
        "Antes from level",
        "int",
        hint="blank: no antes",
        optional=True,
    ),
    FormField("blindStructure.startingAnte", "Starting ante", "int", "0"),
    FormField("blindStructure.anteIncreaseFactor", "Ante increase factor", "float", "1.0"),
    FormField("payoutStructure.paidPlacesPercent", "Paid places (%)", "float", "30"),
    FormField("payoutStructure.topHeaviness", "Top-heaviness τ", "float", "0.85"),
    FormField("payoutStructure.minPaidPlaces", "Minimum paid places", "int", "1"),
    FormField("handPauseMs", "Pause between hands (ms)", "int", "2000", "0–60000"),
)
NAMES = frozenset(f.name for f in FIELDS)
# Not tournament settings: the request body's own fields.
BODY_FIELDS = frozenset({"name", "handPauseMs"})


@dataclass
class FormResult:
    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    """Messages by input name; ``""`` holds one that names no input of the form."""
    body: CreateTournamentBody | None = None
    parsed: TournamentSettings | None = None


def defaults() -> dict[str, str]:
    return {f.name: f.default for f in FIELDS}


def _number(f: FormField, text: str) -> Any:
    # A typo stays a string, so the schema itself says "should be a valid integer" beside it.
    try:
        return int(text) if f.kind == "int" else float(text)
    except ValueError:
        return text


def _raw_settings(values: dict[str, str]) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for f in FIELDS:
        text = values.get(f.name, "").strip()
        if f.name in BODY_FIELDS or (f.optional and not text):
            continue
        value = _number(f, text) if f.kind in ("int", "float") else text
        head, _, tail = f.name.partition(".")
        if tail:
            raw.setdefault(head, {})[tail] = value
        else:
            raw[head] = value
    return raw


def _message(field_name: str, message: str) -> str:
    return message.removeprefix(f"{field_name}: ")


def check(form: dict[str, str]) -> FormResult:
    """Validate the form as the API would: the request body, then the settings schema."""
    values = {name: form.get(name, "") for name in NAMES}
    result = FormResult(values=values)
    try:
        result.parsed = validate_settings(_raw_settings(values))
    except DomainError as err:
        where = err.field if err.field in NAMES else ""
        result.errors[where] = _message(err.field or "", err.message)
    pause = values["handPauseMs"].strip()
    try:
        result.body = CreateTournamentBody(
            name=values["name"].strip(),
            settings=_raw_settings(values),
            hand_pause_ms=_number(FIELDS[-1], pause) if pause else 2000,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "handPauseMs" if first["loc"][0] == "hand_pause_ms" else "name"
        result.errors.setdefault(where, str(first["msg"]))
    return result


@dataclass(frozen=True)
class Previews:
    levels: list[ScheduledLevel]
    field_size: int
    pool: int
    places: list[tuple[int, float, int]]
    """(place, percent, amount) for a full field."""


def previews(parsed: TournamentSettings, *, levels: int = 10) -> Previews:
    """The blind ladder's first levels and the payouts if every seat is filled."""
    size = parsed.seats
    bps = resolve_payouts(parsed, size)
    amounts = resolve_payout_amounts(parsed, size)
    return Previews(
        levels=schedule_preview(parsed, count=levels).levels,
        field_size=size,
        pool=prize_pool(parsed, size),
        places=[(i, b / 100, a) for i, (b, a) in enumerate(zip(bps, amounts, strict=True), 1)],
    )


# -- the cash-room form ------------------------------------------------------------------------
ROOM_FIELDS: tuple[FormField, ...] = (
    FormField("name", "Name", "text", "Cash room"),
    FormField("entry.amount", "Entry (virtual chips)", "int", "1000", "each player's stack"),
    FormField("stakes.smallBlind", "Small blind", "int", "5"),
    FormField("stakes.bigBlind", "Big blind", "int", "10", "≥ small blind, ≤ entry"),
    FormField("seats", "Seats", "int", "6", f"{MIN_SEATS}–{MAX_SEATS}"),
    FormField("speed", "Speed", "select", Speed.NORMAL.value, options=tuple(Speed)),
    FormField(
        "handPauseMs",
        "Pause between hands (ms)",
        "int",
        "2000",
        "0–60000, blank: 2000",
        optional=True,
    ),
)
ROOM_NAMES = frozenset(f.name for f in ROOM_FIELDS)


@dataclass
class RoomFormResult:
    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    """Messages by input name; ``""`` holds one that names no input of the form."""
    codes: dict[str, str] = field(default_factory=dict)
    """Each message's error code (``validation_error``, ``invalid_settings``), by input name."""
    body: CreateRoomBody | None = None
    rules: RoomRules | None = None


def room_defaults() -> dict[str, str]:
    return {f.name: f.default for f in ROOM_FIELDS}


def _room_wire(values: dict[str, str]) -> dict[str, Any]:
    """The form as ``POST /rooms``'s JSON body: numbers parsed (a typo stays a string)."""
    raw: dict[str, Any] = {}
    for f in ROOM_FIELDS:
        text = values.get(f.name, "").strip()
        if f.optional and not text:
            continue  # the body's default
        value = _number(f, text) if f.kind == "int" else text
        head, _, tail = f.name.partition(".")
        if tail:
            raw.setdefault(head, {})[tail] = value
        else:
            raw[head] = value
    return raw


def _room_message(field_name: str, message: str) -> str:
    """``stakes.bigBlind must be at least …`` beside ``stakes.bigBlind``: ``must be at least …``."""
    for prefix in (f"{field_name}: ", f"{field_name} "):
        if field_name and message.startswith(prefix):
            return message.removeprefix(prefix)
    return message


def room_error(result: RoomFormResult, err: DomainError) -> None:
    """Put a refusal beside the input it names (or above the form when it names none)."""
    where = err.field if err.field in ROOM_NAMES else ""
    if where not in result.errors:
        result.errors[where] = _room_message(err.field or "", err.message)
        result.codes[where] = err.code.value


def check_room(form: dict[str, str]) -> RoomFormResult:
    """Validate the form as ``POST /rooms`` would: the request body, then ``validate_room``."""
    values = {name: form.get(name, "") for name in ROOM_NAMES}
    result = RoomFormResult(values=values)
    try:
        body = CreateRoomBody.model_validate(_room_wire(values))
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"])
            where = where if where in ROOM_NAMES else ""
            if where not in result.errors:
                result.errors[where] = str(error["msg"])
                result.codes[where] = ErrorCode.VALIDATION_ERROR.value
        return result
    try:
        result.rules = validate_room(body.model_dump(by_alias=True))
    except DomainError as err:
        room_error(result, err)
        return result
    result.body = body
    return result


@dataclass(frozen=True)
class RoomPreview:
    decision_timeout: int
    disconnect_grace: int
    big_blinds: float
    """The entry in big blinds: the stack every player sits down with."""


def room_preview(rules: RoomRules) -> RoomPreview:
    return RoomPreview(
        rules.decision_timeout, rules.disconnect_grace, rules.entry / rules.big_blind
    )
