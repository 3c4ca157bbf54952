"""Who may take a seat in a tournament: the audience gate, the CoPilot advisor rules, capacity.

Each rule is a ``verify_*`` function that raises :class:`DomainError` with the seed system's
code, so the workflow validator, the API and the admin pages refuse in the same words.
"""

from __future__ import annotations

from domain.errors import DomainError, ErrorCode
from domain.settings import TableKind


def verify_seat_allowed(kind: TableKind | str, *, is_agent: bool) -> None:
    """The audience gate cash tables and tournaments share (the seed's assertSeatAllowed).

    >>> verify_seat_allowed("agent", is_agent=True)
    >>> verify_seat_allowed("agent", is_agent=False)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: humans are not allowed at an agent table
    """
    kind = TableKind(kind)
    if kind is TableKind.AGENT and not is_agent:
        raise DomainError(
            ErrorCode.HUMANS_NOT_ALLOWED_AT_AGENT_TABLE, "humans are not allowed at an agent table"
        )
    if kind in (TableKind.HUMAN_ONLY, TableKind.COPILOT) and is_agent:
        raise DomainError(
            ErrorCode.AGENT_NOT_ALLOWED_AT_HUMAN_TABLE,
            f"agents are not allowed at a {kind.value} table",
        )


def verify_advisor(
    kind: TableKind | str,
    advisor_agent_id: str | None,
    *,
    advisor_owner_user_id: str | None = None,
    advisor_skills: frozenset[str] = frozenset(),
    registrant_user_id: str = "",
    advisors_in_use: frozenset[str] = frozenset(),
    venue: str = "tournament",
) -> None:
    """CoPilot registrations name an advisor the registrant owns, skilled for poker:sng, unshared
    (a tournament's registration, and a copilot cash room's join: ``venue="room"``).

    >>> verify_advisor("open", None)
    >>> verify_advisor("open", "agent-1")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: advisorAgentId is only accepted on a copilot tournament
    """
    kind = TableKind(kind)
    if kind is not TableKind.COPILOT:
        if advisor_agent_id is not None:
            raise DomainError(
                ErrorCode.ADVISOR_ON_NON_COPILOT_KIND,
                f"advisorAgentId is only accepted on a copilot {venue}",
                field="advisorAgentId",
            )
        return
    if not advisor_agent_id:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            f"a copilot {venue} needs an advisorAgentId",
            field="advisorAgentId",
        )
    if advisor_owner_user_id != registrant_user_id:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent must be owned by the registrant",
            field="advisorAgentId",
        )
    if "poker:sng" not in advisor_skills:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent lacks the poker:sng skill",
            field="advisorAgentId",
        )
    if advisor_agent_id in advisors_in_use:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent already advises another player at this table",
            field="advisorAgentId",
        )


def verify_capacity(seats: int, taken: int) -> None:
    """A seat is free while reserved plus paid entries are fewer than the seats."""
    if taken >= seats:
        raise DomainError(ErrorCode.TOURNAMENT_FULL, f"all {seats} seats are taken")
