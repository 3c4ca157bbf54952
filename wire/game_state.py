"""What a player, an agent or an observer reads of a table: the game state, the hand running
at it, and a finished hand's record: one typed model each, camelCase on the wire.

Inside the workflows, the read store and the ``hands`` table these are the engine's plain
dicts with snake_case keys (``domain.holdem.public_view`` and ``hand_record``): that is what
running workflows carry and what recorded histories hold, so it does not change. The API turns
them into these models as it serves them (``from_engine``), so the wire has one naming rule
and ``/openapi.json`` a schema for every field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from domain.payouts import ResolvedPrizePlace
from domain.schedule import ScheduledLevel
from domain.views import TournamentMyView
from wire.base import HAND_NUMBER as ALIASES_OF_HAND_NUMBER
from wire.base import Served
from wire.events import CardOpening, DeckReveal, Pot, ShownHand

__all__ = [
    "BustedSeat",
    "GameState",
    "HandAction",
    "HandRecord",
    "HandSeat",
    "HandView",
    "LastHand",
    "LateRegistrationView",
    "LegalActions",
    "MttSummary",
    "RoomSettlement",
    "RoomSummary",
    "Stakes",
    "TableSeatView",
    "TournamentBrief",
    "TournamentSchedule",
    "You",
]

HAND_NUMBER = Field(validation_alias=ALIASES_OF_HAND_NUMBER)
"""The engine calls it ``hand_no``; the wire calls every hand number ``handNumber``."""


# -- a running hand -----------------------------------------------------------------------
class LegalActions(Served):
    """What the seat to act may do. Raise amounts are *to* amounts (the bet's new total)."""

    seat: int
    actions: list[Literal["fold", "check", "call", "raise", "all_in"]]
    to_call: int
    min_raise_to: int | None
    max_raise_to: int | None


class HandSeat(Served):
    """A seat in the hand. ``holeCards`` are null unless they are the viewer's own or were
    shown down; an agent with a key on its Agent Card gets its own as ``sealedHoleCards``
    instead (a sealed box to that key, base64; docs/fairness.md), never in clear."""

    seat: int
    stack: int
    bet: int
    committed: int
    folded: bool
    all_in: bool
    hole_cards: list[str] | None
    sealed_hole_cards: str | None = None


class HandAction(Served):
    street: Literal["preflop", "flop", "turn", "river"]
    seat: int
    action: Literal["fold", "check", "call", "raise", "all_in"]
    amount: int
    """The bet's total after a call or raise; 0 for a fold or check."""
    all_in: bool
    auto: Literal["timeout", "sitting_out", "leaving"] | None = None
    """Set when the table acted for the player; null when the player did."""


class HandView(Served):
    """The hand as this viewer may see it."""

    street: Literal["preflop", "flop", "turn", "river"]
    button: int | None
    board: list[str]
    pot: int
    players: list[HandSeat]
    actor: int | None
    """The seat to act, or null."""
    turn: int
    legal: LegalActions | None
    """The viewer's legal actions on the viewer's turn, else null."""
    actions: list[HandAction]
    over: bool
    pots: list[Pot] | None


class YourCards(Served):
    """The reader's own hole cards in a hand they played, with their openings."""

    seat: int
    cards: list[str]
    openings: list[CardOpening]


class BustedSeat(Served):
    seat: int
    stack_before: int


class LastHand(Served):
    """The previous hand's public summary, with its revealed seed (so it can be verified)."""

    hand_number: int = HAND_NUMBER
    board: list[str]
    shown: dict[str, ShownHand]
    """By seat."""
    pots: list[Pot]
    stacks_after: dict[str, int]
    busted: list[BustedSeat]
    deck_commitment: str | None
    deck_seed: str | None = None
    """Hands dealt before card commitments: the revealed seed."""
    deck: DeckReveal | None = None
    prev_hash: str | None = None
    hash: str | None = None

    ABSENT_WHEN_NULL = frozenset({"deck_seed", "deck", "prev_hash", "hash"})


# -- the game state -----------------------------------------------------------------------
class Stakes(Served):
    small_blind: int
    big_blind: int
    ante: int


class TableSeatView(Served):
    """A seat at the table. ``pending`` (joining) and ``leaving`` are a room's."""

    seat: int
    player_id: str
    stack: int
    sitting_out: bool
    timeouts: int
    """Consecutive decision timeouts: the second in a row sits the player out."""
    pending: bool
    leaving: bool
    sat_out_hands: int
    disconnected_at: int | None = None
    """While the seat's decision is held for the disconnect grace: when its stream dropped
    (epoch ms; null when a room player's polling lapsed instead)."""
    grace_until: int | None = None
    """While the seat's decision is held for the disconnect grace: when the timeout rules
    apply (epoch ms; ``deadline`` says the same for the seat to act)."""
    disconnect_grace_from_hand: int | None = None
    """The disconnect grace is rationed, one hand in ten: the first hand whose decisions may
    get it again (null: any decision may). Until then a dropped stream's timer runs out at
    the decision time like anyone's."""


class You(Served):
    """Who the caller is at this table; null for a spectator."""

    player_id: str
    seat: int | None
    stack: int
    status: Literal[
        "playing", "sitting_out", "joining", "leaving", "eliminated", "won", "in_transit"
    ]
    """``in_transit``: a multi-table tournament is moving you to another table; the state has
    no table (``tableId`` null) until you sit down there (docs/mtt.md)."""
    place: int | None
    to_act: bool
    may_do: list[str]
    """The legal actions on your turn, plus ``sit_in`` and (in a room) ``leave``."""


class TournamentBrief(Served):
    """The seed's ``tournament`` field."""

    state: str
    current_level: int
    small_blind: int
    big_blind: int
    ante: int
    level_ends_at: int | None
    """Epoch ms; null before play starts."""
    registered_count: int


class TournamentSchedule(Served):
    """The seed's ``tournamentSchedule``: an open-ended preview and the resolved prizes."""

    levels: list[ScheduledLevel]
    continues: bool
    total_levels: None
    prize_structure: list[ResolvedPrizePlace]


class RoomTimeouts(Served):
    decision: int
    disconnect_grace: int


class RoomEntry(Served):
    amount: int
    currency: str


class RoomSummary(Served):
    """A cash room's own fields in its game state."""

    status: str
    name: str
    speed: str
    timeouts: RoomTimeouts
    entry: RoomEntry


class LateRegistrationView(Served):
    open: bool
    closes_at: int
    """Epoch ms."""


class MttSummary(Served):
    """A multi-table tournament's numbers for the viewer (docs/mtt.md, "What an agent sees").
    Place and the next pay jump are ``tournamentMyView``'s ``rank`` and ``payJumpToNext``,
    among the whole field."""

    table_number: int | None
    """The table you sit at (1, 2, ...); null while you are moved between tables, and for a
    spectator."""
    tables_left: int
    players_left: int
    """Entries with chips, on every table."""
    average_stack: int
    """Chips in play over players left, in whole chips (rounded down)."""
    paid_places: int
    places_to_the_money: int
    """Busts still to come before everyone left is paid; 0 once in the money."""
    hand_for_hand: bool
    """Every table plays one hand at a time in step (the bubble, docs/mtt.md)."""
    late_registration: LateRegistrationView | None
    """Null when the tournament has no late registration."""
    icm_exact: bool
    """Whether ``tournamentMyView.icmEquity`` is exact ICM (``true``) or, past the exact
    model's work limit in a large field, the chip equity of the prizes at stake (``false``;
    docs/domain.md, "A multi-table field")."""


class NextDeckView(Served):
    hand_number: int
    commitment: str
    seeded: list[int]
    """Seats whose seed the table has for that hand."""


class GameState(Served):
    """One viewer's game state: the table (only the viewer's own hole cards), the legal
    actions, and either the tournament's fields or the room's. ``version`` moves on whenever
    anything here changes (``waitForChange`` long-polls on it)."""

    version: int
    tournament_id: str | None = None
    room_id: str | None = None
    table_id: str | None
    hand_number: int
    stakes: Stakes | None
    deck_commitment: str | None
    """The running hand's deck commitment, published at the deal."""
    seats: list[TableSeatView]
    hand: HandView | None
    turn: int | None
    legal_actions: LegalActions | None
    deadline: int | None
    """When the seat to act times out (epoch ms), while a decision is awaited."""
    last_hand: LastHand | None
    next_deck: NextDeckView | None = None
    """The next hand's deck root: send a seed for it (``POST …/seed``) before it is dealt."""
    chain_head: str | None = None
    """The hash of this table's last hand record."""
    you: You | None
    tournament: TournamentBrief | None = None
    tournament_schedule: TournamentSchedule | None = None
    tournament_my_view: TournamentMyView | None = None
    """For a live entrant only."""
    mtt: MttSummary | None = None
    """A multi-table tournament's numbers once its tables play; null for a Sit-and-Go (and
    before an MTT's play starts); left out for a room."""
    room: RoomSummary | None = None

    def to_wire(self) -> dict[str, Any]:
        # A tournament's state has no room fields and a room's no tournament fields.
        return self.model_dump(mode="json", by_alias=True, exclude=self._absent())

    def _absent(self) -> set[str]:
        absent = {"room_id", "room"} if self.tournament_id is not None else set()
        if self.room_id is not None or self.tournament_id is None:
            absent |= {"tournament_id", "tournament", "tournament_schedule", "mtt"}
        if self.tournament_my_view is None:
            absent.add("tournament_my_view")
        return absent


# -- a finished hand ----------------------------------------------------------------------
class RoomSettlement(Served):
    gross_pot: int
    net_to_winner: dict[str, int]
    rake: int


class HandRecord(Served):
    """A finished hand as the hand history serves it: who sat where, the forced bets, every
    action, the board, what was shown, the pots, the stacks before and after, the deck
    commitment and the revealed seed; a room's hand also its ledger settlement."""

    model_config = ConfigDict(extra="ignore")
    """A stored record is read as it was written: a key this version does not know is
    left out rather than refusing the hand."""

    table_id: str
    hand_number: int = HAND_NUMBER
    level: int
    small_blind: int
    big_blind: int
    ante: int
    players: dict[str, str]
    """Seat to player id."""
    seats: list[int]
    button: int | None
    blinds: dict[str, int]
    antes: dict[str, int]
    posted_blinds: dict[str, int]
    posted_antes: dict[str, int]
    dead_antes: bool
    min_bet: int
    stacks_before: dict[str, int]
    stacks_after: dict[str, int]
    hole_cards: dict[str, list[str]]
    """By seat: the cards this reader may see (docs/fairness.md)."""
    actions: list[HandAction]
    board: list[str]
    showdown_order: list[int]
    shown: dict[str, ShownHand]
    pots: list[Pot]
    busted: list[BustedSeat]
    deck_commitment: str | None
    deck_seed: str | None = None
    """Hands dealt before card commitments revealed their seed; they are served without it
    (it would reveal every folded hand)."""
    deck: DeckReveal | None = None
    prev_hash: str | None = None
    """The hash of the table's record before this one (null for its first)."""
    hash: str | None = None
    """This record's hash (``domain.fairness.record_hash``); the next one links to it."""
    settlement: RoomSettlement | None = None
    your_cards: YourCards | None = None
    """Only for a reader who played the hand."""

    ABSENT_WHEN_NULL = frozenset(
        {"settlement", "your_cards", "deck", "prev_hash", "hash", "deck_seed"}
    )
