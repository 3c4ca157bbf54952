"""Inputs, outputs, carried states and views of the table workflows (a tournament's
TableWorkflow and a cash room's RoomWorkflow), shared with the tournament and the API."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from pydantic import Field

from domain.holdem import viewer_view
from wire.base import HAND_NUMBER, WireModel
from wire.log import EventInput
from wire.mtt import BoundaryOrder, ManagedTable


class TableSeat(WireModel):
    seat: int
    player_id: str
    stack: int
    sitting_out: bool = False
    timeouts: int = 0
    """Consecutive decision timeouts: the second in a row sits the player out."""
    # Cash rooms only (a tournament seat keeps the defaults):
    owner_user_id: str | None = None
    """Whose balance the entry came from and the stack goes back to (an agent's owner)."""
    session: int = 0
    """The room's join number for this sitting: the money legs' idempotency keys carry it."""
    pending: bool = False
    """The entry is being reserved: the seat is held but not dealt in yet."""
    leaving: bool = False
    """Asked to leave during a hand: checks or folds, and goes at the hand's end."""
    sat_out_hands: int = 0
    """Consecutive hands dealt without this sitting-out player (3 remove them)."""
    disconnected_at: int | None = None
    """While the table holds this seat's decision for the disconnect grace: when its stream
    dropped (epoch ms; null when the grace is for polling that lapsed)."""
    grace_until: int | None = None
    """While the table holds this seat's decision for the disconnect grace: when the grace
    ends and the timeout rules apply (epoch ms)."""
    graced_hand: int | None = None
    """The last hand in which this seat was given the disconnect grace (``grace-budget-v1``:
    the next grace comes ``GRACE_EVERY_HANDS`` hands later)."""


class RoomDeparture(WireModel):
    """A player's last leave from a room, and how many leaves in a row (each within an hour
    of the one before) it ended."""

    left_ms: int
    streak: int = 1


class RoomSpec(WireModel):
    """A cash room's rules and lifecycle, carried by its RoomWorkflow (no tournament)."""

    room_id: str
    name: str
    entry: int
    small_blind: int
    big_blind: int
    speed: str
    decision_timeout: int
    disconnect_grace: int
    created_ms: int
    kind: str = "open"
    """Who may sit (``domain.settings.TableKind``): the join validator's audience gate. Rooms
    started before audiences carry none: ``open``."""
    status: str = "waiting"
    idle_since_ms: int
    """When the room last became empty (or was created): the idle-close clock's start."""
    close_requested: bool = False
    close_reason: str | None = None
    joins: int = 0
    stream_seq: int = 0
    """Events published outside hands (joins, leaves, status): their dedupe keys count up."""
    updates_per_run: int = Field(default=500, ge=20, le=740)
    """The run's Update budget (workflows/budget.py): joins and leaves are refused past it,
    within a hand too, and the run hands over at the next hand boundary (security review N2;
    tests shorten it). At most 740, so a hand keeps the 1,240 Updates the raise cap bounds it
    by (docs/rooms.md)."""
    rejoin_cooldown_seconds: int = Field(default=10, ge=0, le=3_600)
    """A player who left waits this long before joining again, doubling with each leave in a
    row (security review N2; tests set 0)."""
    departures: dict[str, RoomDeparture] = Field(default_factory=dict)
    """Who left lately, by player: what the join cooldown reads (pruned after an hour)."""


class PendingDeck(WireModel):
    """A deck committed before the hand that will deal it: its secret (hex), the root that
    was published for it and when, and the seeds players sent for it, by seat."""

    hand_number: int
    secret: str = ""
    """In hex, from a draw made before the deck key; else empty and ``sealed`` holds it."""
    root: str
    sealed: str = ""
    drawn_for: str = ""
    committed_ms: int
    seeds: dict[int, str] = Field(default_factory=dict)


class NextDeck(WireModel):
    """What the table shows of the next hand's deck: the root a seed must answer, and the
    seats that already sent one."""

    hand_number: int
    commitment: str
    seeded: list[int]


class HandLoopState(WireModel):
    """What every table carries across continue-as-new (between hands only), whichever venue
    it is at: its seats, its hands and its decks (workflows/hand_loop.py). A tournament's
    table carries a ``TableState``, a cash room a ``RoomState``; each reads a payload written
    before the split (a key its type does not declare is ignored)."""

    table_id: str
    tournament_id: str | None = None
    seat_count: int
    seats: list[TableSeat]
    hand_no: int = 0
    positions: dict[str, int] | None = None
    auto_folds: int = 0
    hand_pause_ms: int = 2000
    seen_updates: dict[str, int] = Field(default_factory=dict)
    """Update ids this table or room took lately, with when they were sent (the handler
    binding, core/handler_binding.py: an Update id is used once, across continue-as-new)."""
    version: int = 0
    last_hand: dict[str, Any] | None = None
    """The previous hand's public summary (TableView.last_hand), carried across
    continue-as-new so the first hand of a new run still shows it."""
    next_deck: PendingDeck | None = None
    """The next hand's deck, committed ahead so players can seed it (docs/fairness.md)."""
    chain_head: str | None = None
    """The hash of this table's last hand record: the next one links to it."""

    def room_shown(self) -> RoomSpec | None:
        """The room the table's view shows (a tournament's table: none)."""
        return None


class TableState(HandLoopState):
    """What a tournament's table (TableWorkflow) carries across continue-as-new."""

    parent_workflow_id: str | None
    settings: dict[str, Any]
    play_start_ms: int
    stop_requested: bool = False
    report_secret: str = ""
    """Given by the tournament (sealed in history by the codec). Tables started before the
    ``reports-v2`` patch carry it inside every report; from it on they sign each report with
    it instead (``report_mac``), so the tournament takes reports only from its own table
    (security review C2, N1)."""
    report_mac: bool = False
    """Sign reports with ``report_mac`` rather than carry the secret (``reports-v2``)."""
    managed: ManagedTable | None = None
    """Set for a table of an MTT (wire/mtt.py): it waits at each hand boundary for the
    tournament's order. A Sit-and-Go's table carries none."""


class RoomState(HandLoopState):
    """What a cash room (RoomWorkflow) carries across continue-as-new: fixed stakes,
    join/leave, no parent. A room's state from before the split also carried a tournament
    table's fields (``parent_workflow_id``, ``settings``, ``play_start_ms``,
    ``stop_requested``, ``report_secret``, ``report_mac``), always empty: they are ignored."""

    room: RoomSpec

    def room_shown(self) -> RoomSpec | None:
        # Who left the room lately is the join cooldown's, not the table's to show.
        return self.room.model_copy(update={"departures": {}})


class SeedInput(WireModel):
    player_id: str
    hand_number: int
    commitment: str
    """The root the seed answers (the game state's ``nextDeck.commitment``)."""
    seed: str
    """Hex, 1 to 64 bytes."""


class SeedResult(WireModel):
    hand_number: int
    commitment: str
    seat: int


class ActInput(WireModel):
    player_id: str
    hand_no: int
    turn: int
    """The turn id from the view the player answered: a stale one is refused (stale_turn)."""
    action: str
    amount: int | None = None
    key: str | None = None
    """The ``Idempotency-Key`` it was sent with (also in the Update's id): the same key again
    for the same turn with another action is refused (``idempotency_key_reused``)."""


class ActResult(WireModel):
    ok: bool = True
    version: int
    hand_number: int = Field(validation_alias=HAND_NUMBER)
    turn: int


class SitInInput(WireModel):
    player_id: str


class HandReport(WireModel):
    """What a finished hand tells the tournament (signal ``hand_completed``)."""

    table_id: str
    hand_no: int
    level: int
    record: dict[str, Any]
    stacks_after: dict[int, int]
    busted: list[dict[str, int]]
    """[{seat, stack_before}] for each seat this hand busted."""
    auto_folds: int
    sitting_out: list[int] = Field(default_factory=list)
    """A managed (MTT) table's seats sitting out after the hand, so that a move carries the
    flag (a Sit-and-Go's table leaves it empty). Left out of the signature when empty, so
    reports from before it verify."""
    secret: str = ""
    """The table's report secret (TableState.report_secret): reports before ``reports-v2``."""
    mac: str = ""
    """HMAC-SHA256 under the report secret over (table id, hand number, content)."""
    ended_at_ms: int = 0
    """When the hand ended by the table's clock. Tournament runs from before ``level-rearm-v1``
    order a report against a level deadline that fired in the same task by it; later runs take
    a fired level first whatever it says (workflows/tournament/play.py ``Play.level_first``)."""


class DeckDraw(WireModel):
    """A hand's secret seed and when it was drawn (the deal time the blinds are read at)."""

    seed: str = ""
    """The secret in hex: draws made before the deck key (history written then)."""
    drawn_at_ms: int
    sealed: str = ""
    """The secret sealed under the worker-only deck key (core/deck_vault.py) for ``drawn_for``."""
    drawn_for: str = ""
    """The table and hand it was drawn for (``"<table>:<hand>"``), the seal's binding."""


class TableResult(WireModel):
    table_id: str
    hands_played: int
    stacks: dict[int, int]
    aborted_hand: int | None = None
    auto_folds: int
    secret: str = ""
    """The table's report secret (TableState.report_secret): results before ``reports-v2``."""
    mac: str = ""
    """HMAC-SHA256 under the report secret over (table id, hands played, content)."""


class StopOrder(WireModel):
    """The tournament's order to its table to stop (force-end), signed like a report: a stop
    with no argument carried no payload for the codec to refuse, so anyone who reached
    Temporal could end a tournament on the spot (found with security review N1)."""

    table_id: str
    mac: str = ""


def report_mac(
    secret: str,
    what: str,
    table_id: str,
    number: int,
    report: HandReport | TableResult | StopOrder | BoundaryOrder,
) -> str:
    """A signature between a tournament and its table: HMAC-SHA256 under the secret the
    tournament gave the table, over the signal's name (``what``), the table id, the hand
    number (or hands played) and every other field. A report copied out of history still
    verifies, so the tournament also takes each hand once, in order (security review N1); a
    report altered in any field, or sent as another signal, does not.

    >>> r = TableResult(table_id="t", hands_played=3, stacks={1: 10}, auto_folds=0)
    >>> mac = report_mac("00" * 16, "table_finished", "t", 3, r)
    >>> mac == report_mac("00" * 16, "table_finished", "t", 3, r.model_copy(update={"mac": "x"}))
    True
    >>> mac == report_mac("00" * 16, "hand_completed", "t", 3, r)
    False
    >>> other = r.model_copy(update={"stacks": {1: 11}})
    >>> mac == report_mac("00" * 16, "table_finished", "t", 3, other)
    False
    """
    # Through JSON text first: the sender holds tuples and int keys where the receiver, who
    # parsed the payload, holds lists and string keys.
    content = json.loads(report.model_dump_json(exclude={"mac", "secret"}))
    # Fields added since the first signed payloads are signed only when set, so a payload
    # recorded before them (in a history being replayed) verifies as it did.
    if isinstance(report, HandReport) and not report.sitting_out:
        del content["sitting_out"]
    if isinstance(report, BoundaryOrder):
        for arriving in content["arrive"]:
            if not arriving["sitting_out"]:
                del arriving["sitting_out"]
    signed = json.dumps([what, table_id, number, content], sort_keys=True, separators=(",", ":"))
    return hmac.new(bytes.fromhex(secret), signed.encode(), hashlib.sha256).hexdigest()


class TableView(WireModel):
    table_id: str
    tournament_id: str | None
    hand_no: int
    level: int
    small_blind: int
    big_blind: int
    ante: int
    seats: list[TableSeat]
    hand: dict[str, Any] | None
    """The engine's view for this viewer: public state plus only the viewer's hole cards."""
    deck_commitment: str | None
    last_hand: dict[str, Any] | None = None
    """The previous hand's public summary, with its revealed seed (so it can be verified)."""
    finished: bool = False
    version: int
    room: RoomSpec | None = None
    deadline_ms: int | None = None
    """When the seat to act times out (epoch ms), while a decision is awaited."""
    next_deck: NextDeck | None = None
    chain_head: str | None = None


class TableSnapshot(WireModel):
    """One published version of a table for the read store (docs/read-model.md): the
    spectators' view, the actor's legal actions (public), and each seat's private part while
    a hand runs (player id to hole cards; the activity seals each for its seat)."""

    key: str
    """The table's workflow id: the read store's key."""
    view: TableView
    legal: dict[str, Any] | None = None
    private: dict[str, list[str]] = Field(default_factory=dict)


class TableActResult(ActResult):
    """What the table's ``act`` answers: the wire's ``ActResult`` plus the table as the action
    left it, for the actor and for spectators, so the API serves the actor's next read
    without asking the table again (read-your-writes at no query). The API strips the views
    from its answer."""

    actor_view: TableView | None = None
    spectator_view: TableView | None = None
    state: TableSnapshot | None = None
    """From ``act-answers-v1`` (workflows/publisher.py ``ACT_ANSWER_PATCH``) the act's answer
    carries the table's new public snapshot instead of the two views: the spectators' view and
    the actor's legal actions, with **no** private part (the hole cards stay where the deal's
    durable publication sealed them; nobody's cards go into the Update's answer). The API that
    made the Update and the worker that ran it both write it to the read store
    (``db/readstore.py write_public_now``), since the table no longer publishes such a
    decision by local activity."""


def seat_view(snapshot: TableSnapshot, viewer: str | None, hole: list[str] | None) -> TableView:
    """``viewer``'s view of a published table: the spectators' view plus that seat's own
    cards (``hole``, its private part) and, on its turn, the legal actions. The table answers
    its queries and actions this way and the API serves the read store this way, so both
    show the same thing (``domain.holdem.viewer_view``)."""
    view = snapshot.view
    seat = next((s.seat for s in view.seats if s.player_id == viewer), None)
    if seat is None or view.hand is None:
        return view
    return view.model_copy(update={"hand": viewer_view(view.hand, seat, hole, snapshot.legal)})


class TablePublication(WireModel):
    """What a table publishes before it waits: a room's stream events in order, then the
    table's newest version (None when it did not change)."""

    events: list[EventInput] = Field(default_factory=list)
    state: TableSnapshot | None = None


class JoinInput(WireModel):
    player_id: str
    owner_user_id: str
    seat: int | None = None
    """A particular free seat (the table's 0-based index; the API's is 1-based); the lowest
    free one when absent."""
    is_agent: bool = False
    """Whether an agent joins: the room's audience gate reads it."""


class JoinResult(WireModel):
    seat: int
    stack: int
    currency: str = "virtual_chips"
    already_seated: bool = False
    """True when this player was already seated: nothing was reserved twice."""


class LeaveInput(WireModel):
    player_id: str


class RoomLeaveResult(WireModel):
    returned: int | None
    """Chips returned to the balance; None while the leave waits for the hand to end."""
    currency: str = "virtual_chips"
    pending: bool = False
    """The player is in the running hand: they check or fold, and leave when it ends."""


class CloseRoomInput(WireModel):
    reason: str = "admin"


class CloseRoomResult(WireModel):
    status: str
    """``closing`` (the running hand finishes first) or ``closed``."""


class RoomRow(WireModel):
    """The rooms read model: written at every status change, join, leave and hand end."""

    room_id: str
    name: str
    seats: int
    entry: int
    small_blind: int
    big_blind: int
    speed: str
    decision_timeout: int
    disconnect_grace: int
    status: str
    hand_number: int
    players: list[dict[str, Any]]
    created_ms: int
    closed: bool = False
    kind: str = "open"


class RoomMove(WireModel):
    """One room money leg (buy-in or cash-out); the key makes a retry move nothing twice."""

    key: str
    room_id: str
    player_id: str
    owner_user_id: str
    amount: int


class RoomHandInput(WireModel):
    """A finished room hand: its ledger posting (the stacks' changes) and its history row."""

    room_id: str
    table_id: str
    hand_no: int
    record: dict[str, Any]
    deltas: dict[str, int]
    """Player → chips won (+) or lost (−) this hand; sums to zero."""
    memo: str


class SeenQuery(WireModel):
    room_id: str
    player_id: str


class StreamQuery(WireModel):
    """Is this seated player's stream (WebSocket or SSE) at this table open?
    (``stream-grace-v1``)"""

    table_id: str
    player_id: str
    room_id: str | None = None
    """A room's id: its polling presence is read too."""


class StreamStatus(WireModel):
    """What the API recorded of a seated player's connection, as ages (seconds before the
    activity read it, by the database's clock)."""

    dropped_ago: float | None = None
    """Since the stream dropped; None while one is open, or if none was ever opened."""
    seen_ago: float | None = None
    """Since a room player last polled or acted there (rooms only; None: never)."""
