"""The CoPilot advisor rule: one advisor advises one player at a table (seed: "not already
advising another player at this table"; refused with ``advisor_required``)."""

from __future__ import annotations

import pytest

from domain.errors import DomainError, ErrorCode
from domain.registration import verify_advisor


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
