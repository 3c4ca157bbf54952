"""Inputs, outputs and views of the workflows' handlers: one model each, shared with the API.

Inside Python the fields are snake_case; on the wire (the API's JSON) they are the seed
system's camelCase, via the alias generator (``wire.base.WireModel``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator

from wire.base import HAND_NUMBER, WireModel
from wire.log import EventInput
from wire.mtt import LateRegistration, MttBooks, MttPublished
from wire.table_messages import HandReport, TableResult

# Still importable from here: the base, the alias and the log's input.
__all__ = ["HAND_NUMBER", "EventInput", "WireModel"]


class TournamentPhase(StrEnum):
    REGISTERING = "registering"
    STARTING = "starting"
    PLAYING = "playing"
    ENDED = "ended"
    SETTLING = "settling"
    CLOSED = "closed"
    CANCELLED = "cancelled"


class EntrantStatus(StrEnum):
    RESERVED = "reserved"
    PAID = "paid"
    RELEASED = "released"


class CreateTournamentInput(WireModel):
    tournament_id: str
    name: str
    settings: dict[str, Any]
    """The settings as sent on the wire; the workflow validates them with the domain."""
    hand_pause_ms: int = 2000
    """The table's pause between hands (players read the result); tests and demos shorten it."""
    money_backend: Literal["virtual", "chain"] = "virtual"
    """Fixed at creation from the deployment's settings: a tournament never changes backend."""
    updates_per_run: int = Field(default=500, ge=20, le=1_500)
    """Registration continues-as-new after this many accepted Updates (Temporal refuses every
    Update past 2,000 in a run: security review H2)."""
    hands_per_run: int = Field(default=300, ge=5, le=300)
    """Play continues-as-new after this many hand reports in a run (tests shorten it to see
    the hand-over; workflows/tournament/play.py ``HANDS_PER_RUN``)."""
    rows_per_payload: int = Field(default=1_000, ge=2, le=1_000)
    """A read-model publication sends its changed entrants in parts of this many ahead of the
    head past it (workflows/tournament/books.py ``ROWS_PER_PAYLOAD``; tests shorten it to see
    the parts on a small field)."""
    force_end_min_level_age_seconds: int = Field(default=300, ge=0, le=86_400)
    """An operator's force-end waits until the current level is this old (the seed's 5
    minutes; fixed at creation from the deployment's setting). The workflow enforces it, so
    a force-end sent straight to Temporal meets it too."""
    reserve_seconds: int = Field(default=120, ge=1, le=3_600)
    """How long an unpaid reserve holds its seat (the seed's 120 s; tests shorten it)."""
    reregister_cooldown_seconds: int = Field(default=10, ge=0, le=3_600)
    """A player who left may come straight back once; after each later leave they wait this
    long, doubling each time (security review H2), and register at most ``MAX_ENTRIES``
    times per tournament either way."""
    payout_retry_seconds: int = Field(default=30, ge=1, le=3_600)
    """The reconciler's first wait after a refused payout (doubling, up to 30 minutes)."""
    carry: TournamentState | None = None
    """Set only by continue-as-new: the state the previous run handed over."""


class RegisterInput(WireModel):
    player_id: str
    owner_user_id: str
    is_agent: bool = False
    advisor_agent_id: str | None = None
    advisor_owner_user_id: str | None = None
    """Resolved by the API from the agent registry, so the workflow can check ownership."""
    advisor_skills: list[str] = []


class RegisterResult(WireModel):
    ok: bool = True
    status: EntrantStatus
    owner_user_id: str
    reserved_until_ms: int | None = None
    version: int


class EntrantView(WireModel):
    player_id: str
    owner_user_id: str
    is_agent: bool
    status: EntrantStatus
    seat: int | None = None
    reserved_until_ms: int | None = None
    advisor_agent_id: str | None = None
    entry_no: int = 1
    """How many times this player has registered here: keys each entry's money legs apart."""
    wallet: str | None = None
    """On-chain: the wallet that deposited the entry (refunds and prizes go back to it)."""
    paying: bool = False
    """Its fee is being collected (the registration lock is not held meanwhile)."""
    released_at_ms: int | None = None
    """When it last left: the re-registration cooldown counts from here (an expired reserve
    took its whole reserve time, so it may register again at once)."""


class Placing(WireModel):
    player_id: str
    place: int
    """Distinct per entrant (1 = winner): the elimination order and the payout intent's key."""
    rank: int
    """What players see: tied entrants share the best place of their group."""
    hand_number: int | None = Field(default=None, validation_alias=HAND_NUMBER)
    """The hand the entrant went out in; null for the winner and for a force-end's finish."""


class Transition(WireModel):
    state: str
    at_ms: int


class LifecycleConfig(WireModel):
    """The seed's seven config attributes of the tournament.lifecycle span."""

    tournament_id: str
    seats: int
    entry_fee: int
    starting_stack: int
    level_duration_seconds: int
    action_timeout_seconds: int
    prize_structure_summary: str


class LifecycleTransition(LifecycleConfig):
    """One state_transition of the tournament.lifecycle span, emitted as it happens."""

    index: int
    """Its place in the tournament's transitions (its span id follows from it)."""
    from_state: str
    to_state: str
    at_ms: int


class LifecycleRecord(LifecycleConfig):
    """What the tournament.lifecycle root span says, recorded once at close from persisted
    times."""

    transitions: list[Transition]
    closed_at_ms: int
    actual_payouts: list[int]
    auto_fold_count: int


class TournamentState(WireModel):
    """Everything a tournament run carries, and hands over across continue-as-new."""

    tournament_id: str
    name: str
    phase: TournamentPhase = TournamentPhase.REGISTERING
    entrants: dict[str, EntrantView] = {}
    field_size: int | None = None
    starts_at_ms: int | None = None
    play_start_ms: int | None = None
    level: int = 0
    table_workflow_id: str | None = None
    table_secret: str = ""
    """The secret the table's reports are signed with (given to the table at its start)."""
    seen_updates: dict[str, int] = {}
    """Update ids this tournament took lately, with when they were sent (the handler binding,
    core/handler_binding.py: an Update id is used once, across continue-as-new too)."""
    reports_v2: bool = False
    """Reports are signed (``report_mac``) and taken once each, in hand order; set at the
    table's start under the ``reports-v2`` patch (runs from before it keep the old check)."""
    stacks: dict[str, int] = {}
    """Chips per player at the last hand boundary."""
    finishes: list[Placing] = []
    entry_wallets: dict[str, str] = {}
    """On-chain: the wallet each paid entry deposited from, keyed ``<player>:<entry no>``,
    kept after a re-entry replaces the player's record (security review 3, S3): a prize goes
    to the wallet of the entry that finished, never to the player's latest record's."""
    hands_played: int = 0
    auto_folds: int = 0
    pending_hands: list[HandReport] = []
    """Hand reports signalled by the table and not yet processed. Carried as the plain dicts
    of ``HandReport.model_dump()`` before they were typed: the same payload, so those read."""
    table_done: TableResult | None = None
    """The table's result once it stopped (a force-end); typed like ``pending_hands``."""
    force_end_requested: bool = False
    stop_sent: bool = False
    """The play loop has told the table to stop (force-end); handlers only set the request."""
    ended_at_ms: int | None = None
    payouts: list[PayoutView] = []
    payout_attempts: int = 0
    """Rounds of payouts that ended with a refusal (the reconciler backs off by them)."""
    payout_retry_at_ms: int | None = None
    """When the reconciler tries the refused payouts again (None when none is refused)."""
    payout_redrive: bool = False
    """An operator asked to try the refused payouts now (``retry_payouts``)."""
    rake_total: int = 0
    rake_collected: bool = False
    rake_failure: str | None = None
    """The house's rake was refused (a definite answer): why; it is retried with the payouts."""
    closed_at_ms: int | None = None
    transitions: list[Transition] = []
    """Every state entered, with when: the tournament.lifecycle span is built from these."""
    lifecycle_live: bool = False
    """Each transition from ``starting`` on is emitted as it happens (a state_transition span);
    set at the seal under the ``lifecycle-live-v1`` patch (runs sealed before it emit the
    lifecycle at close only)."""
    version: int = 0
    mtt: MttBooks | None = None
    """An MTT's table manager's books (wire/mtt.py); a Sit-and-Go carries none."""
    late: LateRegistration | None = None
    """An MTT's late registration, from play's start (``lateRegistrationSeconds`` above 0);
    absent for every other tournament."""
    dirty: list[str] | None = None
    """The players whose part of the view changed since the last publication, handed over
    by a continue-as-new of a run that publishes the view in parts; None (a state from a run
    that did not, or a new tournament): every entrant counts as changed, so the first
    publication writes them all (docs/read-model.md)."""


class PayoutStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    FAILED = "failed"


class PayoutView(WireModel):
    intent_id: str
    position: int
    player_id: str
    amount: int
    destination: str
    status: PayoutStatus = PayoutStatus.PENDING
    tx_hash: str | None = None
    failure_reason: str | None = None


class RetryPayoutsInput(WireModel):
    reason: str = "retried by an operator"
    destinations: dict[str, str] = {}
    """Operators: the wallet for each refused payout whose entry's wallet is not known
    (``payout_wallet_unknown``), by intent id; a payout with a known destination keeps it."""


class ForceEndInput(WireModel):
    reason: str = "force-ended by an operator"


class TournamentView(WireModel):
    tournament_id: str
    name: str
    state: TournamentPhase
    kind: str
    seats: int
    entry_fee: int
    starting_stack: int
    registered_count: int
    paid_count: int = 0
    money_backend: Literal["virtual", "chain"] = "virtual"
    """Where the entry fee is paid from: the virtual balance, or on chain with a permit
    (``POST /tournaments/{id}/pay``; the page ``/play/tournaments/{id}/wallet``). Fixed at
    creation; a view stored before it existed reads ``virtual``."""
    field_size: int | None = None
    starts_at_ms: int | None = None
    play_start_ms: int | None = None
    current_level: int = 0
    level_ends_at_ms: int | None = None
    table_workflow_id: str | None = None
    hands_played: int = 0
    stacks: dict[str, int] = {}
    standings: list[Placing] = []
    payouts: list[PayoutView] = []
    payout_retry_at_ms: int | None = None
    """A payout was refused: when the reconciler tries again (an operator can retry now)."""
    entry_fees_total: int = 0
    rake_total: int = 0
    rake_failure: str | None = None
    """Why the house's rake was refused; it is retried with the payouts (None: no refusal)."""
    settings: dict[str, Any] = {}
    force_end_min_level_age_seconds: int = 300
    """How old the current level must be before an operator may force-end (the workflow's
    rule, fixed at creation)."""
    entrants: list[EntrantView]
    version: int
    mtt: MttPublished | None = Field(default=None, exclude_if=lambda v: v is None)
    """An MTT's tables, hand-for-hand and late registration (the agents' ``GameState.mtt``).
    None for a Sit-and-Go, and then left out of the payload (not written as null), so a
    Sit-and-Go's view and every view published before it existed are written as before."""


class EntrantDelta(WireModel):
    """One player's part of the tournament's view, as the workflow last published it."""

    player_id: str
    ordinal: int
    """Where the entrant stands in the workflow's entrants (registration order, which the
    view's ``entrants`` keep); -1 for a player with a stack or finish and no entry."""
    entrant: EntrantView | None = None
    """None only for a player the workflow holds chips or a finish for and no entry."""
    stack: int | None = None
    """Their chips in the view's ``stacks`` (None: not in it)."""
    stack_ordinal: int = -1
    """Where their stack stands in the view's ``stacks`` (the object's key order)."""
    finishes: list[Placing] = []
    """Their finishes (one per busted entry: with re-entries a player can finish twice)."""


class TournamentDelta(WireModel):
    """What one publication writes: the head and the entrants that changed since the last.

    ``head`` is a ``TournamentView`` whose ``entrants``, ``stacks`` and ``standings`` are
    empty; None for a part of a publication too large for one payload, whose rows go first
    and whose head goes with its last part."""

    tournament_id: str
    version: int
    head: TournamentView | None = None
    entrants: list[EntrantDelta] = []


class TournamentRow(WireModel):
    """What the persistence activity upserts into ``tournaments`` (the read model)."""

    tournament_id: str
    name: str
    kind: str
    seats: int
    entry_fee: int
    rake_fee: int
    starting_stack: int
    settings: dict[str, Any]
    state: TournamentPhase
    workflow_id: str
    registered_count: int
    current_level: int = 0
    field_size: int | None = None
    play_started_at_ms: int | None = None
    level_started_at_ms: int | None = None
    ended_at_ms: int | None = None
    closed_at_ms: int | None = None
    view: TournamentView | None = None
    """The whole tournament, for the pushed read model: what runs from before the read model
    came in parts publish (``deltas`` in ``Books``); still read from activities an older
    worker scheduled."""
    delta: TournamentDelta | None = None
    """The head and the entrants that changed (docs/read-model.md, "The tournament's view in
    parts"), in place of ``view``."""


class HandRow(WireModel):
    """A finished hand and the eliminations it caused: written in one transaction."""

    tournament_id: str
    table_id: str
    hand_no: int
    level: int
    record: dict[str, Any]
    eliminations: list[Placing]
    view: TournamentView | None = None
    """The whole tournament after this hand, from runs that publish it whole (as
    ``TournamentRow.view``)."""
    delta: TournamentDelta | None = None
    """The head and the entrants this hand changed, in place of ``view``."""


class EntrantRow(WireModel):
    tournament_id: str
    player_id: str
    owner_user_id: str
    is_agent: bool
    advisor_agent_id: str | None
    status: EntrantStatus
    seat: int | None = None


class PayEntryInput(WireModel):
    player_id: str
    amount: int
    """Must equal the tournament's entryFee exactly (tournament_entry_fee_mismatch)."""
    permit: Permit | None = None


class LeaveVia(StrEnum):
    LEAVE = "leave"
    """The player leaves during registration: a reserve is dropped, a paid entry refunded."""
    STAND_UP = "stand_up"
    """Same as leave while registering; refused once play has begun (seed: stand-up rejection)."""
    INTERNAL = "internal"
    """/internal/tournament-unregister: the unpaid-reserve leg only."""


class UnregisterInput(WireModel):
    player_id: str
    via: LeaveVia = LeaveVia.LEAVE


class CancelInput(WireModel):
    reason: str = "cancelled by an operator"


class LeaveResult(WireModel):
    ok: bool = True
    status: EntrantStatus
    refunded: int = 0
    version: int


UINT256_MAX = 2**256 - 1
ADDRESS = r"^0x[0-9a-fA-F]{40}$"
WORD = r"^0x[0-9a-fA-F]{64}$"


class Permit(WireModel):
    """An ERC-2612 permit signed by the entrant's wallet for the vault (on-chain backend).

    Every field is bounded to what the vault's ABI can encode (security review H1: an
    out-of-range field made web3 raise while building the call, and the activity retried it
    forever): addresses are 20 bytes of hex, ``value`` and ``deadline`` are uint256, ``v`` is
    27/28 (or 0/1), ``r`` and ``s`` are 32 bytes of hex.
    """

    owner: str = Field(pattern=ADDRESS, max_length=42)
    spender: str = Field(pattern=ADDRESS, max_length=42)
    value: int = Field(ge=0, le=UINT256_MAX, strict=True)
    deadline: int = Field(ge=0, le=UINT256_MAX, strict=True)
    v: int = Field(strict=True)
    r: str = Field(pattern=WORD, max_length=66)
    s: str = Field(pattern=WORD, max_length=66)

    @field_validator("v")
    @classmethod
    def _v_is_a_recovery_id(cls, v: int) -> int:
        if v not in (0, 1, 27, 28):
            raise ValueError("v must be 27 or 28 (or 0 or 1)")
        return v


class MoneyMove(WireModel):
    """One idempotent money step: the key makes a retried activity move nothing twice."""

    key: str
    tournament_id: str
    player_id: str
    amount: int
    owner_user_id: str | None = None
    """Whose ledger account pays and is refunded: the entrant's owner (an agent's owner, a
    player themselves). None in moves recorded before it existed: the player's own."""
    permit: Permit | None = None
    """On-chain entry only: the signed permit the deposit uses."""
    wallet: str | None = None
    """On-chain refund only: the wallet that deposited (refunds go back to it)."""
    entry_key: str | None = None
    """Refund only: the key of the entry move it refunds (the vault keys deposits by it)."""


class PrizePayment(WireModel):
    """One payout intent to execute exactly once (unique per tournament and position)."""

    intent_id: str
    tournament_id: str
    position: int
    player_id: str
    amount: int
    destination: str
    """A ledger account (virtual) or the wallet that deposited (on-chain)."""


class PayoutReceipt(WireModel):
    intent_id: str
    applied: bool
    """False when the intent had already been executed (a retry): nothing moved this time."""
    tx_hash: str | None = None
    reference: str
    amount: int | None = None
    """What the intent paid (None in receipts written before receipts were checked)."""


class MoneyReceipt(WireModel):
    key: str
    applied: bool
    reference: str
    amount: int | None = None
    """What the move moved (None in receipts written before receipts were checked)."""


CreateTournamentInput.model_rebuild()


class PayoutConfirmation(WireModel):
    intent_id: str
    tx_hash: str | None
    reference: str


class PayoutFailure(WireModel):
    intent_id: str
    reason: str
