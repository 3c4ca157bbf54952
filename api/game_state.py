"""One composer for the game state: every viewer's answer, typed from end to end.

:func:`compose` builds a viewer's ``GameState`` (``wire/game_state.py``) from the table's
published view as the read model serves it to that viewer (``api/read_model.py``: the public
snapshot plus the viewer's own private part), the tournament's view with its settings parsed
once (:class:`WatchedTournament`) or the room's own record, and the card key the viewer's hole
cards are sealed to. The HTTP routes, the fast path, the SSE and WebSocket streams and the
advisor's socket all serve what it builds, through ``GameStateCache.render``; a stream's
``action_required`` is :func:`action_required` of the same model, not a reading of the JSON.

The engine's dicts (the hand's view, the last hand) are validated straight into their served
models; the rules' values (``domain/game_state.py``) come as snake_case objects. Nothing is
turned to camelCase before the body is written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from core.card_seal import seal_cards
from domain.game_state import (
    TournamentParts,
    mtt_numbers,
    tournament_my_view,
    tournament_parts,
    you,
)
from domain.holdem.timeouts import grace_allowed, grace_from_hand
from domain.rooms import CURRENCY
from domain.settings import TournamentSettings, validate_settings
from wire.game_state import (
    GameState,
    HandView,
    LastHand,
    LateRegistrationView,
    MttSummary,
    NextDeckView,
    RoomEntry,
    RoomSummary,
    RoomTimeouts,
    Stakes,
    TableSeatView,
    TournamentBrief,
    TournamentSchedule,
    You,
)
from wire.messages import TournamentView
from wire.stream_messages import ActionRequired
from wire.table_messages import TableView

__all__ = [
    "WatchedTournament",
    "action_required",
    "before_play",
    "compose",
    "schedule_of",
    "sealed_for",
]


@dataclass(frozen=True, slots=True)
class WatchedTournament:
    """A tournament's published view with its settings parsed once (per watch: a tournament's
    settings are fixed at creation) and what every viewer of this version shares."""

    view: TournamentView
    settings: TournamentSettings
    parts: TournamentParts = field(compare=False)

    @classmethod
    def of(cls, view: TournamentView, before: WatchedTournament | None = None) -> WatchedTournament:
        """``view`` ready to compose; the settings ``before`` parsed are reused when the view
        carries the same ones."""
        settings = (
            before.settings
            if before is not None and before.view.settings == view.settings
            else validate_settings(view.settings)
        )
        parts = tournament_parts(
            settings,
            state=view.state.value,
            level=view.current_level,
            play_start_ms=view.play_start_ms,
            registered_count=view.registered_count,
            field_size=view.field_size,
        )
        return cls(view=view, settings=settings, parts=parts)


def sealed_for(view: TableView, viewer: str, public_key: bytes) -> TableView:
    """``viewer``'s view with its own hole cards sealed to ``public_key``
    (``sealed_hole_cards``) and left out in clear."""
    seat = next((s.seat for s in view.seats if s.player_id == viewer), None)
    if seat is None or view.hand is None:
        return view
    players = [
        {**p, "hole_cards": None, "sealed_hole_cards": seal_cards(public_key, p["hole_cards"])}
        if p["seat"] == seat and p.get("hole_cards")
        else p
        for p in view.hand["players"]
    ]
    return view.model_copy(update={"hand": {**view.hand, "players": players}})


def compose(
    version: int,
    table: TableView,
    *,
    viewer: str | None,
    tournament: WatchedTournament | None,
    card_key: bytes | None = None,
) -> GameState:
    """``viewer``'s game state (None: a spectator's) at ``version``: the table as the read
    model serves it to the viewer (only the viewer's own hole cards; sealed to ``card_key``
    when one is given), the legal actions, and either the tournament's fields or, for a cash
    room (``tournament`` None), the room's."""
    if card_key is not None and viewer is not None:
        table = sealed_for(table, viewer, card_key)
    hand = table.hand or None
    hand_view = HandView.model_validate(hand) if hand is not None else None
    seat = next((s for s in table.seats if s.player_id == viewer), None)
    standings = tournament.view.standings if tournament is not None else []
    who = you(
        viewer,
        seat=seat,
        hand=table.hand,
        place=next((f.rank for f in standings if f.player_id == viewer), None),
        room=tournament is None,
        # Out of chips in the tournament's books: a bust an MTT holds unplaced until its late
        # registration closes reads ``eliminated`` (the entry may re-enter meanwhile).
        busted=tournament is not None
        and viewer is not None
        and tournament.view.stacks.get(viewer) == 0,
    )
    room = table.room if tournament is None else None
    return GameState(
        version=version,
        tournament_id=tournament.view.tournament_id if tournament is not None else None,
        room_id=room.room_id if room is not None else None,
        table_id=table.table_id,
        hand_number=table.hand_no,
        stakes=Stakes(small_blind=table.small_blind, big_blind=table.big_blind, ante=table.ante),
        deck_commitment=table.deck_commitment,
        # A room seat's owner and sitting number are the workflow's bookkeeping, not the wire's.
        seats=[
            TableSeatView(
                seat=s.seat,
                player_id=s.player_id,
                stack=s.stack,
                sitting_out=s.sitting_out,
                timeouts=s.timeouts,
                pending=s.pending,
                leaving=s.leaving,
                sat_out_hands=s.sat_out_hands,
                disconnected_at=s.disconnected_at,
                grace_until=s.grace_until,
                disconnect_grace_from_hand=_rationed_until(s.graced_hand, table.hand_no),
            )
            for s in table.seats
        ],
        hand=hand_view,
        turn=hand_view.turn if hand_view is not None else None,
        legal_actions=hand_view.legal if hand_view is not None else None,
        deadline=table.deadline_ms if hand_view is not None and not hand_view.over else None,
        last_hand=LastHand.model_validate(table.last_hand) if table.last_hand else None,
        next_deck=(
            NextDeckView(
                hand_number=table.next_deck.hand_number,
                commitment=table.next_deck.commitment,
                seeded=list(table.next_deck.seeded),
            )
            if table.next_deck is not None
            else None
        ),
        chain_head=table.chain_head,
        you=You(
            player_id=who.player_id,
            seat=who.seat,
            stack=who.stack,
            status=who.status,
            place=who.place,
            to_act=who.to_act,
            may_do=who.may_do,
        )
        if who is not None
        else None,
        tournament=_brief(tournament.parts) if tournament is not None else None,
        tournament_schedule=_schedule(tournament.parts) if tournament is not None else None,
        tournament_my_view=(
            tournament_my_view(
                tournament.settings,
                tournament.parts,
                tournament.view.stacks,
                viewer,
                dealt_in=_dealt_in(table) if tournament.view.mtt is not None else None,
            )
            if tournament is not None
            else None
        ),
        mtt=_mtt(tournament, table.table_id) if tournament is not None else None,
        room=_room(table) if room is not None else None,
    )


def before_play(
    version: int,
    tournament_id: str,
    raw_settings: dict[str, object],
    *,
    state: str,
    registered_count: int,
    field_size: int | None,
) -> GameState:
    """A tournament's game state before its table exists: no table, the tournament's fields
    from its row (api/preplay.py)."""
    parts = tournament_parts(
        validate_settings(raw_settings),
        state=state,
        level=0,
        play_start_ms=None,
        registered_count=registered_count,
        field_size=field_size,
    )
    return GameState(
        version=version,
        tournament_id=tournament_id,
        table_id=None,
        hand_number=0,
        stakes=None,
        deck_commitment=None,
        seats=[],
        hand=None,
        turn=None,
        legal_actions=None,
        deadline=None,
        last_hand=None,
        you=None,
        tournament=_brief(parts),
        tournament_schedule=_schedule(parts),
    )


def in_transit(version: int, tournament: WatchedTournament, viewer: str) -> GameState:
    """The game state of a multi-table tournament's entrant who is between tables (stood up
    at one, not yet seated at the next): no table, ``you.status`` ``in_transit`` with the
    chips the tournament's books carry, and the tournament's fields (docs/mtt.md)."""
    stack = tournament.view.stacks.get(viewer, 0)
    return GameState(
        version=version,
        tournament_id=tournament.view.tournament_id,
        table_id=None,
        hand_number=0,
        stakes=None,
        deck_commitment=None,
        seats=[],
        hand=None,
        turn=None,
        legal_actions=None,
        deadline=None,
        last_hand=None,
        you=You(
            player_id=viewer,
            seat=None,
            stack=stack,
            status="in_transit",
            place=None,
            to_act=False,
            may_do=[],
        ),
        tournament=_brief(tournament.parts),
        tournament_schedule=_schedule(tournament.parts),
        tournament_my_view=tournament_my_view(
            tournament.settings, tournament.parts, tournament.view.stacks, viewer
        ),
        mtt=_mtt(tournament, None),
    )


def schedule_of(tournament: WatchedTournament) -> TournamentSchedule:
    """The tournament's ``tournamentSchedule`` (``GET /tournaments/{id}`` serves it too)."""
    return _schedule(tournament.parts)


def action_required(state: GameState) -> ActionRequired | None:
    """The stream's ``action_required`` for this game state: the viewer's turn, or None."""
    if state.you is None or not state.you.to_act:
        return None
    return ActionRequired(
        hand_number=state.hand_number,
        turn=state.turn or 0,
        legal_actions=state.legal_actions,
        deadline=state.deadline,
        stack=state.you.stack,
    )


def _brief(parts: TournamentParts) -> TournamentBrief:
    b = parts.brief
    return TournamentBrief(
        state=b.state,
        current_level=b.current_level,
        small_blind=b.small_blind,
        big_blind=b.big_blind,
        ante=b.ante,
        level_ends_at=b.level_ends_at,
        registered_count=b.registered_count,
    )


def _dealt_in(table: TableView) -> int:
    """Players with chips at this table: an MTT's M-ratio pays antes for them only."""
    return sum(1 for s in table.seats if s.stack > 0)


def _mtt(tournament: WatchedTournament, table_id: str | None) -> MttSummary | None:
    """The ``mtt`` numbers from what an MTT's view publishes (``TournamentView.mtt``: its
    tables, hand-for-hand, late registration) and its chips; None for a Sit-and-Go."""
    published = tournament.view.mtt
    if published is None:
        return None
    numbers = mtt_numbers(
        tournament.parts,
        tournament.view.stacks,
        table_number=published.tables.get(table_id) if table_id is not None else None,
        tables_left=len(published.tables),
    )
    closes_at = published.late_registration_closes_at_ms
    return MttSummary(
        **asdict(numbers),
        hand_for_hand=published.hand_for_hand,
        late_registration=(
            LateRegistrationView(open=published.late_registration_open, closes_at=closes_at)
            if closes_at is not None
            else None
        ),
    )


def _schedule(parts: TournamentParts) -> TournamentSchedule:
    return TournamentSchedule(
        levels=parts.levels,
        continues=True,
        total_levels=None,
        prize_structure=parts.prize_structure,
    )


def _room(table: TableView) -> RoomSummary:
    room = table.room
    assert room is not None
    return RoomSummary(
        status=room.status,
        name=room.name,
        speed=room.speed,
        timeouts=RoomTimeouts(
            decision=room.decision_timeout, disconnect_grace=room.disconnect_grace
        ),
        entry=RoomEntry(amount=room.entry, currency=CURRENCY),
    )


def _rationed_until(graced_hand: int | None, hand_no: int) -> int | None:
    """The first hand a seat may get the disconnect grace again, while that is still ahead."""
    return None if grace_allowed(graced_hand, hand_no) else grace_from_hand(graced_hand)
