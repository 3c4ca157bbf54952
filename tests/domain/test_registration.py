"""The CoPilot advisor rule: one advisor advises one player at a table (seed: "not already
advising another player at this table"; refused with ``advisor_required``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from domain.errors import DomainError, ErrorCode
from domain.registration import verify_advisor, verify_re_entry, verify_register


def bind(advisor: str, in_use: frozenset[str]) -> None:
    verify_advisor(
        "copilot",
        advisor,
        advisor_owner_user_id="alice",
        advisor_skills=frozenset({"poker:sng"}),
        registrant_user_id="alice",
        advisors_in_use=in_use,
    )


def test_an_advisor_already_advising_at_the_table_is_refused() -> None:
    with pytest.raises(DomainError) as refused:
        bind("adv-1", frozenset({"adv-1"}))
    assert refused.value.code is ErrorCode.ADVISOR_REQUIRED
    assert refused.value.field == "advisorAgentId"
    assert "already advises another player" in refused.value.message


def test_a_free_advisor_binds() -> None:
    bind("adv-1", frozenset())
    bind("adv-1", frozenset({"adv-2"}))


# -- an MTT's re-entry (docs/mtt.md, "Late registration and re-entry") ---------------------


@pytest.mark.parametrize(
    ("paid", "alive", "most", "code"),
    [
        (1, True, 1, ErrorCode.TOURNAMENT_ALREADY_REGISTERED),  # still in play
        (1, False, 0, ErrorCode.TOURNAMENT_ALREADY_REGISTERED),  # no re-entries here
        (2, False, 1, ErrorCode.TOURNAMENT_REGISTRATION_LIMIT),  # one made already
        (3, False, 2, ErrorCode.TOURNAMENT_REGISTRATION_LIMIT),
    ],
)
def test_a_re_entry_is_refused_while_alive_or_past_the_limit(
    paid: int, alive: bool, most: int, code: ErrorCode
) -> None:
    with pytest.raises(DomainError) as refused:
        verify_re_entry(paid_entries=paid, alive=alive, max_re_entries=most)
    assert refused.value.code is code


@pytest.mark.parametrize(("paid", "most"), [(1, 1), (1, 3), (2, 3), (3, 3)])
def test_a_busted_player_re_enters_within_the_limit(paid: int, most: int) -> None:
    verify_re_entry(paid_entries=paid, alive=False, max_re_entries=most)


def test_late_registration_counts_every_entry_against_the_field() -> None:
    """With re-entries the field holds more entries than entrants: the count passed wins."""
    ask = SimpleNamespace(
        player_id="p9",
        owner_user_id="u9",
        is_agent=False,
        advisor_agent_id=None,
        advisor_owner_user_id=None,
        advisor_skills=[],
    )
    rules: dict[str, Any] = dict(
        phase="registering", kind="open", seats=12, now_ms=None, cooldown_seconds=10
    )
    verify_register(ask, {}, **rules, taken_now=11)
    with pytest.raises(DomainError) as full:
        verify_register(ask, {}, **rules, taken_now=12)
    assert full.value.code is ErrorCode.TOURNAMENT_FULL
