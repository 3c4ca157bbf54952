"""Settings validation: every rule of the seed's sngTableSettingsSchema, refused by field."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import DomainError, ErrorCode
from domain.settings import TableKind, TournamentSettings, validate_settings
from tests.domain.builders import valid_settings_dict

STRUCTURE = {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 300}
LEGACY = [{"sb": 10, "bb": 20}, {"sb": 15, "bb": 30, "ante": 5}]


def refused(raw: dict[str, Any]) -> DomainError:
    with pytest.raises(DomainError) as info:
        validate_settings(raw)
    assert info.value.code is ErrorCode.INVALID_SETTINGS
    assert info.value.field is not None
    assert info.value.field in str(info.value), "the message names the field"
    return info.value


def test_valid_settings_read_in_snake_case_and_write_back_in_camel_case() -> None:
    s = validate_settings(valid_settings_dict())
    assert (s.seats, s.entry_fee, s.rake_fee, s.starting_stack) == (9, 110, 10, 1500)
    assert s.kind is TableKind.OPEN
    wire = s.to_wire()
    assert wire["entryFee"] == 110
    assert wire["blindStructure"]["increaseFactor"] == 1.5
    assert validate_settings(wire) == s


def test_defaults() -> None:
    raw = valid_settings_dict(rakeFee=..., kind=...)
    s = validate_settings(raw)
    assert s.rake_fee == 0
    assert s.kind is TableKind.OPEN
    assert s.late_registration_seconds == 0
    assert s.rebuy_config is None
    assert s.payout_structure is None and s.prize_structure is None
    assert s.disconnect_grace == 60  # seed 004's disconnectGrace at normal speed


@pytest.mark.parametrize("grace", [0, 30, 60, 300])
def test_the_disconnect_grace_takes_the_seeds_speeds_and_none(grace: int) -> None:
    """Seed 004's speeds: turbo 30 s, normal 60 s, slow 300 s; 0 gives no grace."""
    assert validate_settings(valid_settings_dict(disconnectGrace=grace)).disconnect_grace == grace


def test_snake_case_names_are_accepted_in_python() -> None:
    s = TournamentSettings(
        seats=2,
        entry_fee=10,
        starting_stack=100,
        action_timeout_seconds=3,
        blind_levels=[{"sb": 1, "bb": 2}],  # type: ignore[list-item]
        level_duration_seconds=30,
    )
    assert s.level_duration_ms == 30_000


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"seats": 1}, "seats"),
        ({"seats": 11}, "seats"),
        ({"seats": "9"}, "seats"),
        ({"entryFee": 0}, "entryFee"),
        ({"entryFee": 10.5}, "entryFee"),
        ({"entryFee": True}, "entryFee"),
        ({"entryFee": ...}, "entryFee"),
        ({"rakeFee": -1}, "rakeFee"),
        ({"rakeFee": 110}, "rakeFee"),
        ({"rakeFee": 200}, "rakeFee"),
        ({"startingStack": 0}, "startingStack"),
        ({"actionTimeoutSeconds": 2}, "actionTimeoutSeconds"),
        ({"actionTimeoutSeconds": 301}, "actionTimeoutSeconds"),
        ({"disconnectGrace": -1}, "disconnectGrace"),
        ({"disconnectGrace": 301}, "disconnectGrace"),
        ({"disconnectGrace": "60"}, "disconnectGrace"),
        ({"disconnectGrace": 30.5}, "disconnectGrace"),
        ({"lateRegistrationSeconds": 30}, "lateRegistrationSeconds"),
        ({"rebuyConfig": {"maxRebuys": 1}}, "rebuyConfig"),
        ({"kind": "cash"}, "kind"),
        ({"levelDurationSeconds": 29}, "levelDurationSeconds"),
        ({"levelDurationSecond": 60}, "levelDurationSecond"),
        ({"blindStructure": ...}, "blindStructure"),
        (
            {"blindStructure": {**STRUCTURE, "startingSmallBlind": 0}},
            "blindStructure.startingSmallBlind",
        ),
        ({"blindStructure": {**STRUCTURE, "increaseFactor": 1.0}}, "blindStructure.increaseFactor"),
        (
            {"blindStructure": {**STRUCTURE, "increaseFactor": float("inf")}},
            "blindStructure.increaseFactor",
        ),
        (
            {"blindStructure": {**STRUCTURE, "levelDurationSeconds": 10}},
            "blindStructure.levelDurationSeconds",
        ),
        ({"blindStructure": {**STRUCTURE, "anteStartLevel": -1}}, "blindStructure.anteStartLevel"),
        ({"blindStructure": {**STRUCTURE, "startingAnte": -5}}, "blindStructure.startingAnte"),
        (
            {"blindStructure": {**STRUCTURE, "anteIncreaseFactor": 0.9}},
            "blindStructure.anteIncreaseFactor",
        ),
        ({"payoutStructure": {"paidPlacesPercent": 101}}, "payoutStructure.paidPlacesPercent"),
        ({"payoutStructure": {"topHeaviness": -0.1}}, "payoutStructure.topHeaviness"),
        ({"payoutStructure": {"minPaidPlaces": 0}}, "payoutStructure.minPaidPlaces"),
    ],
)
def test_each_rule_is_refused_naming_its_field(overrides: dict[str, Any], field: str) -> None:
    assert refused(valid_settings_dict(**overrides)).field == field


def test_levels_need_a_duration_when_no_structure_gives_one() -> None:
    raw = valid_settings_dict(blindStructure=..., blindLevels=LEGACY)
    assert refused(raw).field == "levelDurationSeconds"
    s = validate_settings({**raw, "levelDurationSeconds": 45})
    assert s.level_duration_seconds_effective == 45


def test_the_structures_duration_wins_over_the_top_level_one() -> None:
    s = validate_settings(valid_settings_dict(levelDurationSeconds=45, blindLevels=LEGACY))
    assert s.level_duration_seconds_effective == 300


@pytest.mark.parametrize(
    ("levels", "field"),
    [
        ([], "blindLevels"),
        ([{"sb": 10, "bb": 5}], "blindLevels[0].bb"),
        ([{"sb": 10, "bb": 20}, {"sb": 5, "bb": 20}], "blindLevels[1].sb"),
        ([{"sb": 10, "bb": 20}, {"sb": 10, "bb": 15}], "blindLevels[1].bb"),
        ([{"sb": 10, "bb": 20, "ante": 5}, {"sb": 10, "bb": 20}], "blindLevels[1].ante"),
        ([{"sb": 10, "bb": 20}, {"sb": 0, "bb": 20}], "blindLevels[1].sb"),
        ([{"sb": 10, "bb": 20, "extra": 1}], "blindLevels[0].extra"),
    ],
)
def test_legacy_levels_must_be_monotonic(levels: list[dict[str, int]], field: str) -> None:
    raw = valid_settings_dict(blindStructure=..., blindLevels=levels, levelDurationSeconds=60)
    assert refused(raw).field == field


def test_equal_legacy_levels_are_allowed() -> None:
    levels = [{"sb": 10, "bb": 20}, {"sb": 10, "bb": 20}]
    s = validate_settings(valid_settings_dict(blindLevels=levels))
    assert s.blind_levels is not None and len(s.blind_levels) == 2


@pytest.mark.parametrize(
    "prizes",
    [
        [{"position": 1, "percent": 60}, {"position": 2, "percent": 30}],
        [{"position": 1, "percent": 60}, {"position": 3, "percent": 40}],
        [{"position": 2, "percent": 60}, {"position": 1, "percent": 40}],
        [{"position": 1, "percent": 100}, {"position": 1, "percent": 0.5}],
        [{"position": i, "percent": 10} for i in range(1, 11)],  # more places than 9 seats
        [],
    ],
)
def test_bad_prize_structures_are_refused(prizes: list[dict[str, Any]]) -> None:
    assert refused(valid_settings_dict(prizeStructure=prizes)).field.startswith("prizeStructure")


def test_prize_percents_sum_as_typed_decimals() -> None:
    prizes = [
        {"position": 1, "percent": 33.4},
        {"position": 2, "percent": 33.3},
        {"position": 3, "percent": 33.3},
    ]
    s = validate_settings(valid_settings_dict(prizeStructure=prizes))
    assert s.prize_structure is not None and len(s.prize_structure) == 3


def test_all_four_audiences() -> None:
    kinds = {validate_settings(valid_settings_dict(kind=k)).kind for k in TableKind}
    assert kinds == set(TableKind)


def test_settings_are_immutable() -> None:
    s = validate_settings(valid_settings_dict())
    with pytest.raises(ValueError):
        s.seats = 3  # type: ignore[misc]


# -- the field: Sit-and-Go or MTT (issue 31, docs/mtt.md) --------------------------------


def test_a_sit_and_go_is_the_default_field() -> None:
    s = validate_settings(valid_settings_dict())
    assert (s.field_bound, s.field_minimum, s.is_mtt) == (9, 9, False)
    assert s.scheduled_start_at is None and s.max_re_entries == 0


def test_an_mtt_field_takes_many_tables_a_minimum_and_a_scheduled_start() -> None:
    s = validate_settings(
        valid_settings_dict(
            seats=6, maxEntrants=10_000, minEntrants=20, scheduledStartAt=1_800_000_000_000
        )
    )
    assert (s.seats, s.field_bound, s.field_minimum, s.is_mtt) == (6, 10_000, 20, True)
    assert s.scheduled_start_at == 1_800_000_000_000


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"maxEntrants": 10_001}, "maxEntrants", "less than or equal to 10000"),
        ({"maxEntrants": 8}, "maxEntrants", "at least seats"),
        ({"maxEntrants": "60"}, "maxEntrants", "integer"),
        ({"seats": 2, "maxEntrants": 3}, "maxEntrants", "at least 3 seats"),
        ({"maxEntrants": 60, "minEntrants": 61}, "minEntrants", "at most maxEntrants"),
        ({"minEntrants": 1}, "minEntrants", "greater than or equal to 2"),
        ({"minEntrants": 5}, "minEntrants", "starts when full"),
        ({"scheduledStartAt": 1_800_000_000_000}, "scheduledStartAt", "starts when full"),
        ({"maxEntrants": 60, "scheduledStartAt": -1}, "scheduledStartAt", "greater than"),
        ({"lateRegistrationSeconds": 30}, "lateRegistrationSeconds", "only an MTT"),
        ({"lateRegistrationSeconds": -1}, "lateRegistrationSeconds", "greater than"),
        ({"maxReEntries": 1}, "maxReEntries", "needs lateRegistrationSeconds"),
        ({"maxEntrants": 60, "maxReEntries": 1}, "maxReEntries", "needs lateRegistration"),
        (
            {"maxEntrants": 60, "lateRegistrationSeconds": 60, "maxReEntries": -1},
            "maxReEntries",
            "greater than",
        ),
        (
            {"maxEntrants": 60, "prizeStructure": [{"position": 1, "percent": 100}] * 0},
            "prizeStructure",
            "at least 1",
        ),
    ],
)
def test_field_settings_are_refused_with_a_clear_message(
    overrides: dict[str, Any], field: str, words: str
) -> None:
    err = refused(valid_settings_dict(**overrides))
    assert err.field == field
    assert words in str(err)


def test_an_mtt_takes_late_registration_and_re_entries() -> None:
    s = validate_settings(
        valid_settings_dict(seats=6, maxEntrants=60, lateRegistrationSeconds=600, maxReEntries=2)
    )
    assert (s.late_registration_seconds, s.max_re_entries) == (600, 2)
    late_only = validate_settings(
        valid_settings_dict(seats=6, maxEntrants=60, lateRegistrationSeconds=60)
    )
    assert late_only.max_re_entries == 0


def test_a_heads_up_sit_and_go_is_still_valid_and_so_is_minentrants_equal_to_seats() -> None:
    assert validate_settings(valid_settings_dict(seats=2)).field_bound == 2
    assert validate_settings(valid_settings_dict(minEntrants=9)).field_minimum == 9


def test_an_mtt_prize_list_may_pay_more_places_than_one_table_seats() -> None:
    places = [{"position": i, "percent": 10} for i in range(1, 11)]
    assert (
        len(
            validate_settings(
                valid_settings_dict(seats=6, maxEntrants=60, prizeStructure=places)
            ).prize_structure
            or []
        )
        == 10
    )
    assert refused(valid_settings_dict(seats=6, prizeStructure=places)).field == "prizeStructure"
