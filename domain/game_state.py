"""The tournament part of a player's game state: the seed's three optional ``mode='sng'`` fields.

``tournament`` (state, level, blinds, level end, registered count), ``tournamentSchedule`` (an
open-ended preview and the resolved prize structure) and ``tournamentMyView`` (rank, stack in
big blinds, M-ratio, pay jump, ICM equity), composed from the tournament's own numbers so the
API only forwards them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.blinds import resolve_blinds
from domain.clock import level_deadline_ms
from domain.payouts import resolve_payout_amounts, resolved_prize_structure
from domain.schedule import schedule_preview
from domain.settings import TournamentSettings
from domain.views import my_view

PREVIEW_LEVELS = 8


def tournament_fields(
    settings: TournamentSettings,
    *,
    state: str,
    level: int,
    play_start_ms: int | None,
    registered_count: int,
    field_size: int | None,
    stacks: Mapping[str, int],
    viewer: str | None,
) -> dict[str, Any]:
    """The wire's ``tournament``, ``tournamentSchedule`` and (for a live entrant)
    ``tournamentMyView``.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 2, "entryFee": 100, "startingStack": 1000,
    ...     "actionTimeoutSeconds": 30, "blindStructure": {"startingSmallBlind": 10,
    ...     "increaseFactor": 1.5, "levelDurationSeconds": 60}})
    >>> f = tournament_fields(s, state="playing", level=1, play_start_ms=0, registered_count=2,
    ...                       field_size=2, stacks={"a": 1500, "b": 500}, viewer="b")
    >>> f["tournament"]["smallBlind"], f["tournament"]["levelEndsAt"], f["tournamentMyView"]["rank"]
    (15, 120000, 2)
    """
    blinds = resolve_blinds(settings, level)
    size = field_size or settings.seats
    tournament: dict[str, Any] = {
        "state": state,
        "currentLevel": level,
        "smallBlind": blinds.sb,
        "bigBlind": blinds.bb,
        "ante": blinds.ante,
        "levelEndsAt": (
            level_deadline_ms(settings, play_start_ms, level) if play_start_ms is not None else None
        ),
        "registeredCount": registered_count,
    }
    preview = schedule_preview(
        settings, from_level=level, count=PREVIEW_LEVELS, play_start_ms=play_start_ms
    )
    schedule = {
        "levels": [lv.to_wire() for lv in preview.levels],
        "continues": True,
        "totalLevels": None,
        "prizeStructure": [p.to_wire() for p in resolved_prize_structure(settings, size)],
    }
    fields: dict[str, Any] = {"tournament": tournament, "tournamentSchedule": schedule}
    live = {player: chips for player, chips in stacks.items() if chips > 0}
    if viewer is not None and viewer in live:
        amounts = resolve_payout_amounts(settings, size)
        fields["tournamentMyView"] = my_view(live, viewer, blinds, amounts).to_wire()
    return fields


def you_view(
    viewer: str | None,
    *,
    seat: Mapping[str, Any] | None,
    hand: Mapping[str, Any] | None,
    place: int | None,
    room: bool,
) -> dict[str, Any] | None:
    """Who the caller is at this table (the wire's ``you``), or None for a spectator.

    ``seat`` is the caller's seat as the table lists it (``seat``, ``stack``, ``sittingOut``,
    and in a room ``pending`` and ``leaving``); ``hand`` the running hand's public view for
    the caller; ``place`` the caller's finishing place once out of a tournament.

    >>> you_view("b", seat={"seat": 2, "stack": 0}, hand=None, place=3, room=False)["status"]
    'eliminated'
    >>> you = you_view("a", seat={"seat": 1, "stack": 900, "sittingOut": True}, hand=None,
    ...                place=None, room=False)
    >>> you["status"], you["mayDo"]
    ('sitting_out', ['sit_in'])
    >>> you_view("c", seat={"seat": 0, "stack": 3000}, hand=None, place=1, room=False)["status"]
    'won'
    >>> you_view(None, seat=None, hand=None, place=None, room=False) is None
    True
    """
    if viewer is None or (seat is None and place is None):
        return None
    legal = (hand or {}).get("legal")
    to_act = bool(legal) and seat is not None and (hand or {}).get("actor") == seat.get("seat")
    if place == 1:
        status = "won"
    elif place is not None or (seat is not None and seat.get("stack", 0) <= 0 and not hand):
        status = "eliminated"
    elif seat is not None and seat.get("pending"):
        status = "joining"
    elif seat is not None and seat.get("leaving"):
        status = "leaving"
    elif seat is not None and seat.get("sittingOut"):
        status = "sitting_out"
    else:
        status = "playing"
    may_do: list[str] = list(legal["actions"]) if to_act and legal else []
    if status == "sitting_out":
        may_do.append("sit_in")
    if room and status in ("playing", "sitting_out", "joining"):
        may_do.append("leave")
    return {
        "playerId": viewer,
        "seat": seat.get("seat") if seat is not None else None,
        "stack": seat.get("stack", 0) if seat is not None else 0,
        "status": status,
        "place": place,
        "toAct": to_act,
        "mayDo": may_do,
    }
