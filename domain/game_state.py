"""The rules' part of a player's game state, as snake_case values the API composes
(``api/game_state.py``): the seed's three optional ``mode='sng'`` fields and who the caller is.

``tournament`` (state, level, blinds, level end, registered count) and ``tournamentSchedule`` (an
open-ended preview and the resolved prize structure) are the same for every viewer of one
tournament version (:func:`tournament_parts`, made once per version); ``tournamentMyView`` (rank,
stack in big blinds, M-ratio, pay jump, ICM equity) is one live entrant's
(:func:`tournament_my_view`); ``you`` is the caller's seat and what they may do (:func:`you`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from domain.blinds import Blinds, resolve_blinds
from domain.clock import level_deadline_ms
from domain.icm import icm_is_exact
from domain.payouts import ResolvedPrizePlace, resolve_payout_amounts, resolved_prize_structure
from domain.schedule import ScheduledLevel, schedule_preview
from domain.settings import TournamentSettings
from domain.views import TournamentMyView, my_view

PREVIEW_LEVELS = 8

Status = Literal["playing", "sitting_out", "joining", "leaving", "eliminated", "won"]


@dataclass(frozen=True, slots=True)
class Brief:
    """The seed's ``tournament`` field."""

    state: str
    current_level: int
    small_blind: int
    big_blind: int
    ante: int
    level_ends_at: int | None
    """Epoch ms; None before play starts."""
    registered_count: int


@dataclass(frozen=True, slots=True)
class TournamentParts:
    """What every viewer of one tournament version shares: the brief, the schedule's levels
    and prizes, and what a live entrant's own view is computed from."""

    brief: Brief
    levels: list[ScheduledLevel]
    prize_structure: list[ResolvedPrizePlace]
    blinds: Blinds
    field_size: int
    amounts: tuple[int, ...] = ()
    """Chips per paid place at ``field_size`` (index 0 = first place)."""


@dataclass(frozen=True, slots=True)
class MttNumbers:
    """A multi-table tournament's numbers for one viewer (the wire's ``mtt``)."""

    table_number: int | None
    """The viewer's table; None while in transit, or for a spectator of no table."""
    tables_left: int
    players_left: int
    average_stack: int
    """Chips in play over players left, rounded down (0 once nobody is left)."""
    paid_places: int
    places_to_the_money: int
    """Busts still to come before every player left is paid (0 once in the money)."""
    icm_exact: bool
    """Whether ``tournamentMyView.icmEquity`` is the exact ICM (else a large field's chip
    equity, ``domain.icm.icm_or_chip_equities``)."""


def mtt_numbers(
    parts: TournamentParts,
    stacks: Mapping[str, int],
    *,
    table_number: int | None,
    tables_left: int,
) -> MttNumbers:
    """The numbers every viewer of an MTT reads, from the tournament's chips (every entry's,
    every table's, in transit included) and its payout table at the field size.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 4, "maxEntrants": 12, "entryFee": 100,
    ...     "startingStack": 1000, "actionTimeoutSeconds": 30, "blindStructure": {
    ...     "startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 60}})
    >>> p = tournament_parts(s, state="playing", level=1, play_start_ms=0,
    ...                      registered_count=12, field_size=12)
    >>> n = mtt_numbers(p, {"a": 3000, "b": 0, "c": 1500, "d": 1500}, table_number=2,
    ...                 tables_left=1)
    >>> n.players_left, n.average_stack, n.paid_places, n.places_to_the_money, n.icm_exact
    (3, 2000, 2, 1, True)
    """
    live = [chips for chips in stacks.values() if chips > 0]
    paid = sum(1 for amount in parts.amounts if amount > 0)
    return MttNumbers(
        table_number=table_number,
        tables_left=tables_left,
        players_left=len(live),
        average_stack=sum(live) // len(live) if live else 0,
        paid_places=paid,
        places_to_the_money=max(0, len(live) - paid),
        icm_exact=icm_is_exact(len(live), len(parts.amounts)),
    )


@dataclass(frozen=True, slots=True)
class You:
    """Who the caller is at this table (the wire's ``you``)."""

    player_id: str
    seat: int | None
    stack: int
    status: Status
    place: int | None
    to_act: bool
    may_do: list[str]


class Seat(Protocol):
    """A seat as the table lists it (``wire.table_messages.TableSeat``); ``pending`` and
    ``leaving`` are a room's."""

    @property
    def seat(self) -> int: ...
    @property
    def stack(self) -> int: ...
    @property
    def sitting_out(self) -> bool: ...
    @property
    def pending(self) -> bool: ...
    @property
    def leaving(self) -> bool: ...


def tournament_parts(
    settings: TournamentSettings,
    *,
    state: str,
    level: int,
    play_start_ms: int | None,
    registered_count: int,
    field_size: int | None,
) -> TournamentParts:
    """The wire's ``tournament`` and ``tournamentSchedule`` at one tournament version.

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 2, "entryFee": 100, "startingStack": 1000,
    ...     "actionTimeoutSeconds": 30, "blindStructure": {"startingSmallBlind": 10,
    ...     "increaseFactor": 1.5, "levelDurationSeconds": 60}})
    >>> p = tournament_parts(s, state="playing", level=1, play_start_ms=0, registered_count=2,
    ...                      field_size=2)
    >>> p.brief.small_blind, p.brief.level_ends_at, len(p.levels)
    (15, 120000, 8)
    """
    blinds = resolve_blinds(settings, level)
    size = field_size or settings.seats
    preview = schedule_preview(
        settings, from_level=level, count=PREVIEW_LEVELS, play_start_ms=play_start_ms
    )
    return TournamentParts(
        brief=Brief(
            state=state,
            current_level=level,
            small_blind=blinds.sb,
            big_blind=blinds.bb,
            ante=blinds.ante,
            level_ends_at=(
                level_deadline_ms(settings, play_start_ms, level)
                if play_start_ms is not None
                else None
            ),
            registered_count=registered_count,
        ),
        levels=list(preview.levels),
        prize_structure=resolved_prize_structure(settings, size),
        blinds=blinds,
        field_size=size,
        amounts=tuple(resolve_payout_amounts(settings, size)),
    )


def tournament_my_view(
    settings: TournamentSettings,
    parts: TournamentParts,
    stacks: Mapping[str, int],
    viewer: str | None,
    *,
    dealt_in: int | None = None,
) -> TournamentMyView | None:
    """The wire's ``tournamentMyView`` for a live entrant (chips left); None for anyone else.

    ``stacks`` are every entry's chips (an MTT's: every table's), so the rank is among the
    whole field's live entries and the pay jump is the MTT payout table's at the field size;
    ``dealt_in`` is how many players the viewer's table deals in (the M-ratio's antes), by
    default every live entry (a Sit-and-Go's one table).

    >>> from domain.settings import validate_settings
    >>> s = validate_settings({"seats": 2, "entryFee": 100, "startingStack": 1000,
    ...     "actionTimeoutSeconds": 30, "blindStructure": {"startingSmallBlind": 10,
    ...     "increaseFactor": 1.5, "levelDurationSeconds": 60}})
    >>> p = tournament_parts(s, state="playing", level=1, play_start_ms=0, registered_count=2,
    ...                      field_size=2)
    >>> tournament_my_view(s, p, {"a": 1500, "b": 500}, "b").rank
    2
    >>> tournament_my_view(s, p, {"a": 2000, "b": 0}, "b") is None
    True
    """
    live = {player: chips for player, chips in stacks.items() if chips > 0}
    if viewer is None or viewer not in live:
        return None
    return my_view(live, viewer, parts.blinds, parts.amounts, dealt_in=dealt_in)


def you(
    viewer: str | None,
    *,
    seat: Seat | None,
    hand: Mapping[str, Any] | None,
    place: int | None,
    room: bool,
    busted: bool = False,
) -> You | None:
    """Who the caller is at this table (the wire's ``you``), or None for a spectator.

    ``seat`` is the caller's seat as the table lists it; ``hand`` the running hand's view for
    the caller (the engine's, ``domain.holdem.public_view``); ``place`` the caller's finishing
    place once out of a tournament. ``busted``: the tournament counts the caller's entry out
    (no chips) before it has a place: an MTT places the busts of its late-registration window
    only when the window closes (docs/mtt.md), and until then the entry is ``eliminated``
    without a place, wherever the table lists it (or does not: its seat went at the bust).

    >>> from types import SimpleNamespace as S
    >>> def seat(n, stack, sitting_out=False):
    ...     return S(seat=n, stack=stack, sitting_out=sitting_out, pending=False, leaving=False)
    >>> you("b", seat=seat(2, 0), hand=None, place=3, room=False).status
    'eliminated'
    >>> me = you("a", seat=seat(1, 900, True), hand=None, place=None, room=False)
    >>> me.status, me.may_do
    ('sitting_out', ['sit_in'])
    >>> you("c", seat=seat(0, 3000), hand=None, place=1, room=False).status
    'won'
    >>> you(None, seat=None, hand=None, place=None, room=False) is None
    True
    >>> out = you("d", seat=None, hand=None, place=None, room=False, busted=True)
    >>> out.status, out.place, out.stack
    ('eliminated', None, 0)
    """
    if viewer is None or (seat is None and place is None and not busted):
        return None
    legal = (hand or {}).get("legal")
    to_act = bool(legal) and seat is not None and (hand or {}).get("actor") == seat.seat
    status: Status
    if place == 1:
        status = "won"
    elif place is not None or busted or (seat is not None and seat.stack <= 0 and not hand):
        status = "eliminated"
    elif seat is not None and seat.pending:
        status = "joining"
    elif seat is not None and seat.leaving:
        status = "leaving"
    elif seat is not None and seat.sitting_out:
        status = "sitting_out"
    else:
        status = "playing"
    may_do: list[str] = list(legal["actions"]) if to_act and legal else []
    if status == "sitting_out":
        may_do.append("sit_in")
    if room and status in ("playing", "sitting_out", "joining"):
        may_do.append("leave")
    return You(
        player_id=viewer,
        seat=seat.seat if seat is not None else None,
        stack=seat.stack if seat is not None else 0,
        status=status,
        place=place,
        to_act=to_act,
        may_do=may_do,
    )
