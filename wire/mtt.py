"""What an MTT's tournament and its tables carry and say to each other (issue 31, docs/mtt.md).

A Sit-and-Go carries none of this (every field that holds it defaults to ``None``), so its
payloads read as before. The protocol, in short: a managed table reports each hand as a
Sit-and-Go's table does (``hand_completed``, signed), then waits, serving its requests and a
stop, for the tournament's signed :class:`BoundaryOrder` for that hand number (signal
``boundary``): the seats that stand up, the entries that sit down, and whether the table
finishes (it broke, or the final table formed elsewhere). The tournament sends the order at
once unless the table has to wait for others (hand-for-hand, the final table's redraw, or too
few players to deal).
"""

from __future__ import annotations

from pydantic import Field

from wire.base import WireModel


class ArrivingSeat(WireModel):
    """An entry the tournament seats at a table at a hand boundary."""

    seat: int
    player_id: str
    stack: int
    waits: bool = False
    """Seated between the next hand's button and small blind: not dealt the next hand (TDA
    Rules 8A and 10: dealt in once the button has passed)."""
    sitting_out: bool = False
    """The entry was sitting out at the table it left: it arrives sitting out (dealt in, its
    hands played for it) until the player sits in. Left out of the order's signature when
    false, so orders from before it verify."""


class BoundaryOrder(WireModel):
    """The tournament's instruction to a managed table after hand ``hand_no`` (signal
    ``boundary``), signed like a report (``report_mac`` under the table's secret)."""

    table_id: str
    hand_no: int
    stand_up: list[int] = Field(default_factory=list)
    """Seats whose entries leave (moved, or busted); their stacks were in the hand's report."""
    arrive: list[ArrivingSeat] = Field(default_factory=list)
    finish: bool = False
    """The table is done: everyone stood up, it deals no more (a break, the final table)."""
    redraw_button: bool = False
    """The final table's first hand: the button is drawn afresh (TDA Rule 12)."""
    mac: str = ""


class ManagedTable(WireModel):
    """What a table run by an MTT's table manager carries (``TableState.managed``)."""

    number: int
    """The table's number in its tournament (1, 2, ...; tables break from the highest)."""
    order: BoundaryOrder | None = None
    """The boundary order taken and not yet applied."""
    waiting: list[int] = Field(default_factory=list)
    """Seats that sit out the next hand (``ArrivingSeat.waits``)."""
    opened_late: bool = False
    """Opened by a late entrant when every table was full (late registration only): the
    table starts with fewer than two players and waits for its first order (for hand 0)
    before it deals, as at any boundary."""


class MttTable(WireModel):
    """One table as the tournament's books hold it."""

    number: int
    workflow_id: str
    secret: str
    seats: dict[int, str] = Field(default_factory=dict)
    """Seat -> entry, as the table has them (after the last order the table took)."""
    positions: dict[str, int] | None = None
    """The button, small blind and big blind of its last hand (``ButtonPositions``)."""
    hands: int = 0
    """The last hand it reported."""
    auto_folds: int = 0
    """Its count of folds made for players, as of its last report."""
    at_boundary: bool = False
    """It reported its last hand and waits for its order."""
    done: bool = False
    """It was told to finish (or stopped): no more reports are taken from it."""
    stand_up: list[int] = Field(default_factory=list)
    """Seats its next order stands up (the books have already taken them off)."""
    arrive: list[ArrivingSeat] = Field(default_factory=list)
    """Entries its next order seats (the books have already seated them)."""
    redraw_button: bool = False
    """Its next order draws the button afresh (the final table's first hand)."""
    away: list[str] = Field(default_factory=list)
    """The entries sitting out at it, as of its last report: a move carries the flag."""
    in_round: bool = False
    """The hand it is dealing belongs to the open hand-for-hand round: its busts wait in
    ``MttBooks.round_busts`` until every table of the round has reported (``h4h-places-v1``)."""


class InTransit(WireModel):
    """An entry moved at one table's boundary to a table that was dealing: held by the
    tournament (chips included) and seated at that table's next boundary."""

    player_id: str
    to_table: int
    to_seat: int
    stack: int
    waits: bool = False
    sitting_out: bool = False
    """It was sitting out at the table it left (``ArrivingSeat.sitting_out``)."""


class RoundBusted(WireModel):
    """A player who busted in the open hand-for-hand round, not placed yet."""

    player_id: str
    table: int
    stack_before: int
    """The chips it started the hand with (deeper finishes higher at one table)."""
    hand_no: int
    """Its table's hand it busted in (the ``player_eliminated`` event's ``handNumber``)."""


class MttBooks(WireModel):
    """The table manager's books (``TournamentState.mtt``)."""

    tables: dict[int, MttTable] = Field(default_factory=dict)
    in_transit: list[InTransit] = Field(default_factory=list)
    moves: dict[str, int] = Field(default_factory=dict)
    """Entries moved so far, by reason (``balance``, ``break``, ``final``)."""
    boundaries: int = 0
    """Hand boundaries processed, every table's."""
    hand_for_hand: bool = False
    """Hand-for-hand holds: the next bust is the bubble, or a round is still open."""
    round_busts: list[RoundBusted] = Field(default_factory=list)
    """The busts of the open hand-for-hand round, placed together when it closes."""
    final_table: bool = False
    """The field fits one table and table 1 plays alone."""
    late_entries: int = 0
    """Entries seated after the start by late registration (re-entries included)."""


class MttView(WireModel):
    """The ``tables`` query's answer: the books with every entry's chips, read together."""

    books: MttBooks
    stacks: dict[str, int]
    field_size: int
    starting_stack: int


class HeldBust(WireModel):
    """An entry that busted while late registration was open: not placed until its close,
    when the field is final (docs/mtt.md, "Late registration and re-entry")."""

    player_id: str
    stack_before: int
    """The chips it started the hand with (a deeper stack finishes higher in one hand)."""
    hand_no: int
    group: int
    """The report it busted in (busts of one report are placed together, as
    ``order_busts`` places one hand's; later groups finish higher)."""


class LateRegistration(WireModel):
    """An MTT's late registration (``lateRegistrationSeconds`` above 0), from play's start
    (``TournamentState.late``; absent for every other tournament)."""

    closes_at_ms: int
    """``playStart + lateRegistrationSeconds``: the close's durable timer fires then."""
    open: bool = True
    entries: dict[str, int] = Field(default_factory=dict)
    """Paid entries per player so far (1, then one more per re-entry)."""
    held: list[HeldBust] = Field(default_factory=list)
    """Busts while open, in the order they happened, placed at the close."""
    groups: int = 0
    """Reports with busts taken while open (``HeldBust.group``)."""


class MttPublished(WireModel):
    """What an MTT's published view (``TournamentView.mtt``) says of its tables, for the
    agents' game state (``GameState.mtt``, docs/mtt.md "What an agent sees"). Computed from the
    books at each publish; a Sit-and-Go's view has none (the key is left out of its payload)."""

    tables: dict[str, int] = Field(default_factory=dict)
    """The tables still playing: table (workflow) id -> table number."""
    hand_for_hand: bool = False
    final_table: bool = False
    late_registration_closes_at_ms: int | None = None
    """When late registration closes (epoch ms); None: the tournament has none."""
    late_registration_open: bool = False
    in_transit: dict[str, int] = Field(default_factory=dict)
    """Entries between tables (moved, or a late entry waiting for its table's boundary):
    player -> the number of the table they go to."""
    in_round: list[int] = Field(default_factory=list)
    """While hand-for-hand: the tables dealing the round's hand (the others wait at their
    boundary for it), by number."""
