"""One typed model per event the logs carry (docs/events.md): what the workflows publish, what
the streams and the JSON pages serve, and what the OpenAPI document describes.

A tournament's log: `tournament_state_changed`, `blind_level_changed`, `player_eliminated`,
`hand_result`, `tournament_ended`, `tournament_payout_settled` (the seed's names). A cash
room's: `hand_start`, `action`, `community_cards`, `pot_update`, `showdown`, `hand_result`,
`player_join`, `player_leave`, `room_status`. A room's log keeps the table's 0-based seat
indices; the room's streams serve every seat from 1 (``room_event_on_wire``, seed 004).

Each model's ``payload()`` is the JSON object the log stores: camelCase, and only the fields
the publisher set (a ``tournament_state_changed`` for ``starting`` carries ``startsAt`` and
``fieldSize``, one for ``closed`` carries ``closedAt``), so an event's body is exactly what
the publisher wrote before the models existed.

>>> BlindLevelChanged(level=2, small_blind=20, big_blind=40, ante=0, level_ends_at=9).payload()
{'level': 2, 'smallBlind': 20, 'bigBlind': 40, 'ante': 0, 'levelEndsAt': 9}
>>> TournamentStateChanged(state="settling").payload()
{'state': 'settling'}
>>> TournamentStateChanged(state="closing")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for TournamentStateChanged
state
  Input should be 'starting', 'playing', 'ended', 'settling', 'closed' or 'cancelled' ...
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from wire.base import HAND_NUMBER, Served
from wire.messages import Placing


class Event(Served):
    """An event's body. ``TYPE`` is its log type (the SSE ``event:`` name)."""

    TYPE: ClassVar[str]

    def payload(self) -> dict[str, Any]:
        # The fields the publisher set (top level only: a nested model is whole).
        return self.model_dump(by_alias=True, include=set(self.model_fields_set), mode="json")


class ShownHand(Served):
    """A hand shown at showdown: its two cards and what they made."""

    cards: list[str]
    hand: str


class Pot(Served):
    """A pot as the hand record keeps it: its chips, the seats that could win it, and what
    each winning seat took."""

    amount: int
    eligible: list[int]
    winners: dict[str, int]


class CardOpening(Served):
    """One revealed card: dealt ``index``-th (docs/fairness.md), from committed ``position``,
    with its salt and Merkle audit path to the deck's root."""

    index: int
    position: int
    card: str
    salt: str
    proof: list[str]


class DeckReveal(Served):
    """A finished hand's deck evidence: the root published before the players' seeds, the
    seeds by seat, and the openings of the board and the cards shown down (nothing else)."""

    version: Literal["v2"]
    root: str
    seeds: dict[str, str]
    """Hex, by seat: what each seat sent for this hand (seats that sent none are absent)."""
    committed_at_ms: int
    """When the root was published (the table's clock): every seed came after it."""
    revealed: list[CardOpening]


# -- a tournament's log -------------------------------------------------------------------
class TournamentStateChanged(Event):
    """The tournament moved: ``starting`` (with ``startsAt``, ``fieldSize``), ``playing``
    (``playStartedAt``, ``currentLevel``), ``ended`` (``endedAt``, ``finalStandings``),
    ``settling``, ``closed`` (``closedAt``; the stream's last event), or ``cancelled``
    (``reason``; the last event too)."""

    TYPE: ClassVar[str] = "tournament_state_changed"
    state: Literal["starting", "playing", "ended", "settling", "closed", "cancelled"]
    starts_at: int | None = None
    field_size: int | None = None
    play_started_at: int | None = None
    current_level: int | None = None
    ended_at: int | None = None
    final_standings: list[Placing] | None = None
    closed_at: int | None = None
    reason: str | None = None


class BlindLevelChanged(Event):
    """A new level began (from the level clock; hands never reset it)."""

    TYPE: ClassVar[str] = "blind_level_changed"
    level: int
    small_blind: int
    big_blind: int
    ante: int
    level_ends_at: int


class PlayerEliminated(Event):
    TYPE: ClassVar[str] = "player_eliminated"
    player_id: str
    place: int
    rank: int
    hand_number: int = Field(validation_alias=HAND_NUMBER)


class TournamentHandResult(Event):
    """A tournament hand's public result (``shown``: the cards shown at showdown)."""

    TYPE: ClassVar[str] = "hand_result"
    table_id: str
    hand_number: int = Field(validation_alias=HAND_NUMBER)
    level: int
    board: list[str]
    pots: list[Pot]
    shown: dict[str, ShownHand]
    """By seat."""
    stacks: dict[str, int]
    """Chips per player id after the hand."""


class Prize(Served):
    """One prize of a finished tournament."""

    position: int
    user_id: str
    amount: int


class TournamentEnded(Event):
    TYPE: ClassVar[str] = "tournament_ended"
    final_standings: list[Placing]
    payouts: list[Prize]


class TournamentPayoutSettled(Event):
    TYPE: ClassVar[str] = "tournament_payout_settled"
    position: int
    user_id: str
    amount: int
    tx_hash: str | None
    """The chain transaction, or the ledger posting's reference for virtual chips."""


# -- a cash room's log --------------------------------------------------------------------
class SeatStack(Served):
    seat: int
    player: str
    stack: int


class HandStart(Event):
    TYPE: ClassVar[str] = "hand_start"
    hand_number: int
    button: int | None
    small_blind: int
    big_blind: int
    seats: list[SeatStack]
    deck_commitment: str | None


class Action(Event):
    TYPE: ClassVar[str] = "action"
    hand_number: int
    seat: int
    street: str
    action: str
    amount: int | None
    all_in: bool
    auto: str | None = None
    """Set when the table acted for the player: ``timeout``, ``sitting_out`` or ``leaving``."""


class CommunityCards(Event):
    TYPE: ClassVar[str] = "community_cards"
    hand_number: int
    street: Literal["flop", "turn", "river"]
    cards: list[str]
    board: list[str]


class PotUpdate(Event):
    TYPE: ClassVar[str] = "pot_update"
    hand_number: int
    pot: int


class Showdown(Event):
    TYPE: ClassVar[str] = "showdown"
    hand_number: int
    shown: dict[str, ShownHand]
    """By seat."""


class RoomHandResult(Event):
    """A room hand's result with its ledger settlement (docs/rooms.md): gross pot, net to
    the winner per seat, no rake."""

    TYPE: ClassVar[str] = "hand_result"
    hand_number: int
    board: list[str]
    pots: list[Pot]
    stacks_after: dict[str, int]
    gross_pot: int
    net_to_winner: dict[str, int]
    rake: int
    deck_commitment: str | None
    deck_seed: str | None = None
    """Hands dealt before card commitments revealed their seed."""
    deck: DeckReveal | None = None
    """The root, the seeds and the openings of the board and the hands shown down."""


class PlayerJoin(Event):
    TYPE: ClassVar[str] = "player_join"
    seat: int
    player: str
    stack: int


class PlayerLeave(Event):
    TYPE: ClassVar[str] = "player_leave"
    seat: int
    player: str
    returned: int
    currency: str
    reason: str


class RoomStatusChanged(Event):
    TYPE: ClassVar[str] = "room_status"
    status: str
    reason: str | None = None


class PlayerMoved(Event):
    """An MTT moved an entry to another table at a hand boundary (docs/mtt.md): to balance
    the tables, because its table broke, or to form the final table."""

    TYPE: ClassVar[str] = "player_moved"
    player_id: str
    from_table: int
    to_table: int
    seat: int
    reason: Literal["balance", "break", "final"]


class TableBroken(Event):
    """An MTT's table was emptied by moves and deals no more."""

    TYPE: ClassVar[str] = "table_broken"
    table_number: int


class HandForHand(Event):
    """Hand-for-hand began (``on``: the next bust changes who is paid, every table plays one
    hand at a time) or ended."""

    TYPE: ClassVar[str] = "hand_for_hand"
    on: bool
    players_left: int


class FinalTable(Event):
    """The field fits one table: the final table forms (its button drawn afresh)."""

    TYPE: ClassVar[str] = "final_table"
    players: list[str]


class LateRegistrationClosed(Event):
    """An MTT's late registration closed: the field and the prize pool are final."""

    TYPE: ClassVar[str] = "late_registration_closed"
    field_size: int
    prize_pool: int


TOURNAMENT_EVENTS: tuple[type[Event], ...] = (
    TournamentStateChanged,
    BlindLevelChanged,
    PlayerEliminated,
    TournamentHandResult,
    TournamentEnded,
    TournamentPayoutSettled,
)
MTT_EVENTS: tuple[type[Event], ...] = (
    PlayerMoved,
    TableBroken,
    HandForHand,
    FinalTable,
    LateRegistrationClosed,
)
"""A multi-table tournament's own events, in its log beside ``TOURNAMENT_EVENTS`` (a
Sit-and-Go publishes none of them)."""
ROOM_EVENTS: tuple[type[Event], ...] = (
    HandStart,
    Action,
    CommunityCards,
    PotUpdate,
    Showdown,
    RoomHandResult,
    PlayerJoin,
    PlayerLeave,
    RoomStatusChanged,
)
ROOM_EVENTS_BY_TYPE: dict[str, type[Event]] = {e.TYPE: e for e in ROOM_EVENTS}
"""A room's event model by its log type (the hand's own events come from
``domain.rooms.hand_events`` as plain objects and are checked against these)."""


def _from_one(seat: Any) -> Any:
    return seat + 1 if isinstance(seat, int) and not isinstance(seat, bool) else seat


def _keys_from_one(by_seat: Any) -> Any:
    if not isinstance(by_seat, dict):
        return by_seat
    return {str(int(k) + 1) if str(k).isdigit() else k: v for k, v in by_seat.items()}


def room_event_on_wire(type_: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A room event as the room's streams serve it: every seat number from 1, as the room
    record numbers them (seed 004). The log keeps the table's 0-based indices, as the room
    workflow published them, so every event ever logged is served the same way.

    >>> room_event_on_wire("player_join", {"seat": 0, "player": "a", "stack": 5})
    {'seat': 1, 'player': 'a', 'stack': 5}
    >>> room_event_on_wire("hand_start", {"button": 2, "seats": [{"seat": 2}], "handNumber": 1})
    {'button': 3, 'seats': [{'seat': 3}], 'handNumber': 1}
    >>> room_event_on_wire("hand_result", {"pots": [{"amount": 4, "eligible": [0, 1],
    ...     "winners": {"1": 4}}], "stacksAfter": {"0": 8, "1": 12}, "netToWinner": {"1": 4}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'pots': [{'amount': 4, 'eligible': [1, 2], 'winners': {'2': 4}}],
     'stacksAfter': {'1': 8, '2': 12}, 'netToWinner': {'2': 4}}
    """
    out = dict(payload)
    if type_ in ("player_join", "player_leave", "action") and "seat" in out:
        out["seat"] = _from_one(out["seat"])
    elif type_ == "hand_start":
        if "button" in out:
            out["button"] = _from_one(out["button"])
        if isinstance(out.get("seats"), list):
            out["seats"] = [
                {**s, "seat": _from_one(s.get("seat"))} if isinstance(s, dict) else s
                for s in out["seats"]
            ]
    elif type_ == "showdown" and "shown" in out:
        out["shown"] = _keys_from_one(out["shown"])
    elif type_ == "hand_result":
        if isinstance(out.get("pots"), list):
            out["pots"] = [
                {
                    **pot,
                    "eligible": [_from_one(s) for s in pot.get("eligible", [])],
                    "winners": _keys_from_one(pot.get("winners", {})),
                }
                if isinstance(pot, dict)
                else pot
                for pot in out["pots"]
            ]
        for key in ("stacksAfter", "netToWinner"):
            if key in out:
                out[key] = _keys_from_one(out[key])
        deck = out.get("deck")
        if isinstance(deck, dict) and "seeds" in deck:
            out["deck"] = {**deck, "seeds": _keys_from_one(deck["seeds"])}
    return out
