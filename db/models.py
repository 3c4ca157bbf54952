"""SQLModel tables: the read models, hand histories, ledger, payout intents and the event log.

Temporal history is the source of truth for a running tournament; these tables are what the
API, the admin pages and the money legs read and write, each write keyed so that a retried
activity writes nothing twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Column, DateTime, Index, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def _ts(*, nullable: bool = True) -> Any:
    return Field(default=None, sa_type=DateTime(timezone=True), nullable=nullable)


def _chips(*, default: int | None = 0, nullable: bool = False) -> Any:
    # Chip and money amounts can outgrow 32 bits (blinds cap at 10**12): always BIGINT.
    return Field(default=default, sa_type=BigInteger, nullable=nullable)


class Tournament(SQLModel, table=True):
    __tablename__ = "tournaments"

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200)
    kind: str = Field(max_length=20)
    seats: int
    entry_fee: int = _chips()
    rake_fee: int = _chips()
    starting_stack: int = _chips()
    settings: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    state: str = Field(max_length=20, index=True)
    workflow_id: str = Field(max_length=100)
    registered_count: int = 0
    field_size: int | None = None
    current_level: int = 0
    level_started_at: datetime | None = _ts()
    play_started_at: datetime | None = _ts()
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    ended_at: datetime | None = _ts()
    closed_at: datetime | None = _ts()


class Entrant(SQLModel, table=True):
    """One player's entry in one tournament; re-registering after a release reuses the row."""

    __tablename__ = "entrants"
    __table_args__ = (UniqueConstraint("tournament_id", "player_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: str = Field(foreign_key="tournaments.id", index=True, max_length=64)
    player_id: str = Field(max_length=100)
    owner_user_id: str = Field(max_length=100)
    is_agent: bool = False
    advisor_agent_id: str | None = Field(default=None, max_length=100)
    status: str = Field(max_length=20)
    seat: int | None = None
    elimination_order: int | None = None
    finish_position: int | None = None
    registered_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    paid_at: datetime | None = _ts()
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Hand(SQLModel, table=True):
    __tablename__ = "hands"
    __table_args__ = (UniqueConstraint("table_id", "hand_no"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: str | None = Field(default=None, index=True, max_length=64)
    table_id: str = Field(max_length=100)
    hand_no: int
    level: int = 0
    record: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class PayoutIntent(SQLModel, table=True):
    """One prize owed; UNIQUE (tournament, position) makes a re-run of settlement harmless."""

    __tablename__ = "payout_intents"
    __table_args__ = (
        UniqueConstraint("tournament_id", "position"),
        CheckConstraint("amount >= 0", name="payout_amount_nonnegative"),
    )

    id: str = Field(primary_key=True, max_length=100)
    tournament_id: str = Field(foreign_key="tournaments.id", index=True, max_length=64)
    position: int
    player_id: str = Field(max_length=100)
    amount: int = _chips()
    destination: str = Field(max_length=200)
    status: str = Field(default="pending", max_length=20)
    tx_hash: str | None = Field(default=None, max_length=100)
    failure_reason: str | None = None
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    confirmed_at: datetime | None = _ts()


class LedgerAccount(SQLModel, table=True):
    """A virtual-chip account: a user's, a tournament's escrow or the house's."""

    __tablename__ = "ledger_accounts"
    __table_args__ = (
        CheckConstraint("allow_negative OR balance >= 0", name="ledger_balance_nonnegative"),
    )

    id: str = Field(primary_key=True, max_length=150)
    kind: str = Field(max_length=20)
    balance: int = _chips()
    allow_negative: bool = False
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class LedgerEntry(SQLModel, table=True):
    """One leg of a double-entry posting; the legs of a posting share its idempotency key."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        UniqueConstraint("posting_key", "account_id"),
        Index("ix_ledger_entries_account", "account_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    posting_key: str = Field(max_length=200)
    account_id: str = Field(foreign_key="ledger_accounts.id", max_length=150)
    amount: int = _chips()
    memo: str = Field(default="", max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Event(SQLModel, table=True):
    """The durable, ordered event log behind the event stream (its id is the SSE event id)."""

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("tournament_id", "dedupe_key"),)

    id: int | None = Field(default=None, sa_type=BigInteger, primary_key=True)
    tournament_id: str = Field(index=True, max_length=64)
    type: str = Field(max_length=50)
    dedupe_key: str = Field(max_length=200)
    payload: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Agent(SQLModel, table=True):
    """A software agent: its owner, its skills and the hash of its API key (never the key).

    The key is 256 random bits, so a plain SHA-256 of it cannot be brute-forced and can be
    looked up by index; a slow password hash would only cost every agent request CPU time.
    """

    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("key_hash"),)

    agent_id: str = Field(primary_key=True, max_length=64)
    owner_user_id: str = Field(index=True, max_length=100)
    name: str = Field(max_length=200)
    skills: list[str] = Field(default_factory=list, sa_column=Column(JSONB, nullable=False))
    key_hash: str = Field(max_length=64)
    key_prefix: str = Field(max_length=16)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    revoked_at: datetime | None = _ts()
    card_public_key: str | None = Field(default=None, max_length=64)
    """The Agent Card's public key (X25519, base64): hole cards reach it sealed to this key."""
    card_key_changed_at: datetime | None = _ts()
    """When the card's key was last put on, replaced or taken off (security review N8: the
    agent and its owner can see that it changed)."""


class Room(SQLModel, table=True):
    """A cash room's read model (the workflow is the truth): written at every status change,
    join, leave and hand end, so listing rooms never queries a workflow."""

    __tablename__ = "rooms"

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200)
    seats: int
    entry: int = _chips()
    small_blind: int = _chips()
    big_blind: int = _chips()
    speed: str = Field(max_length=10)
    decision_timeout: int
    disconnect_grace: int
    status: str = Field(max_length=20, index=True)
    kind: str = Field(default="open", max_length=20, sa_column_kwargs={"server_default": "open"})
    """Who may sit (docs/rooms.md): ``open``, ``human_only``, ``agent`` or ``copilot``."""
    hand_number: int = 0
    players: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=Column(JSONB, nullable=False)
    )
    """As the workflow writes them: ``seat`` (the table's 0-based index), ``handle`` (the
    player id), ``stack``, ``status``; the API serves them as the seed shows them
    (api/routes/rooms.py)."""
    workflow_id: str = Field(max_length=100)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    closed_at: datetime | None = _ts()


class RoomPresence(SQLModel, table=True):
    """Who looked at a room lately: seated players (their polling is their connection, which
    the disconnect grace reads) and observers (counted as ``observerCount``)."""

    __tablename__ = "room_presence"

    room_id: str = Field(primary_key=True, max_length=64)
    viewer: str = Field(primary_key=True, max_length=120)
    seated: bool = False
    last_seen: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class StreamPresence(SQLModel, table=True):
    """A seated player's stream (WebSocket or SSE) at a table: ``dropped_at`` is when the API
    saw it close (null while one is open). The disconnect grace is measured from it
    (docs/rooms.md); only the API writes it and only the table's activity reads it."""

    __tablename__ = "stream_presence"

    table_id: str = Field(primary_key=True, max_length=100)
    """The table's workflow id (``room-…`` or ``table-…``)."""
    player_id: str = Field(primary_key=True, max_length=120)
    dropped_at: datetime | None = _ts()
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class WalletChallenge(SQLModel, table=True):
    """A sign-in-with-Ethereum message issued to one caller for one wallet: used once, and
    only before it expires. The exact text is kept, so verifying parses nothing."""

    __tablename__ = "wallet_challenges"

    nonce: str = Field(primary_key=True, max_length=32)
    user_id: str = Field(index=True, max_length=100)
    address: str = Field(max_length=42)
    message: str = Field(max_length=2000)
    expires_at: datetime = Field(sa_type=DateTime(timezone=True))
    used_at: datetime | None = _ts()


class WalletBinding(SQLModel, table=True):
    """A wallet proven to belong to an account (a player or an agent): the service relays an
    on-chain permit only for a wallet bound to the caller. A wallet binds to one account."""

    __tablename__ = "wallet_bindings"

    address: str = Field(primary_key=True, max_length=42)
    user_id: str = Field(index=True, max_length=100)
    bound_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class ReadState(SQLModel, table=True):
    """The pushed read model (docs/read-model.md): the newest published state of each table
    (``table-…``/``room-…``) and tournament (``tournament-…``), which the API serves without
    asking Temporal. ``public`` is what anyone may see; ``private`` holds each seat's secret
    part while a hand runs (its hole cards), sealed for that seat (``EncryptionCodec
    .seal_value``), and is empty between hands. A write never moves ``version`` back."""

    __tablename__ = "read_states"

    key: str = Field(primary_key=True, max_length=120)
    kind: str = Field(max_length=20)
    version: int = Field(sa_type=BigInteger)
    public: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    private: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class TournamentEntrantState(SQLModel, table=True):
    """One player's part of a tournament's pushed view (docs/read-model.md, "The tournament's
    view in parts"): their entry, stack and finishes as the workflow last published them, with
    the tournament version that wrote them. The head (``read_states``, ``tournament-<id>``)
    holds the rest; ``db.readstore.read_tournament`` puts them together. A write never moves
    ``version`` back."""

    __tablename__ = "tournament_entrant_states"

    tournament_id: str = Field(primary_key=True, max_length=64)
    player_id: str = Field(primary_key=True, max_length=120)
    ordinal: int
    """Where the entrant stands in the workflow's entrants (the view's order)."""
    entrant: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    """The ``EntrantView`` (None: a player with a stack or finish and no entry)."""
    stack: int | None = _chips(default=None, nullable=True)
    stack_ordinal: int = -1
    finishes: list[dict[str, Any]] = Field(sa_column=Column(JSONB, nullable=False))
    """Their ``Placing``s (one per busted entry)."""
    version: int = Field(sa_type=BigInteger)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class LeaderboardRow(SQLModel, table=True):
    """One player's running totals (docs/api.md, "Leaderboard"): written only by the
    publications that record a settled hand, a finished tournament and a settled payout, in
    their own transaction and only the first time that publication lands (db/leaderboard.py),
    so a retried activity counts nothing twice and a request never scans histories."""

    __tablename__ = "leaderboard"

    player_id: str = Field(primary_key=True, max_length=120)
    is_agent: bool = False
    """The id is an agent's (``agents.agent_id``): agents and humans rank apart or together."""
    tournaments_played: int = 0
    tournaments_itm: int = 0
    net_chips: int = _chips()
    hands_played: int = _chips()
    biggest_pot: int = _chips()
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Advice(SQLModel, table=True):
    """A CoPilot advisor's accepted suggestion for one turn of the player it advises
    (docs/copilot.md). One per (table scope, player, hand, turn): the first accepted stands, a
    second is refused (``advice_already_given``), so what the player was shown never changes
    under them. Keyed by table as well: an MTT's tables number their hands each on their own
    (security review 3, S8). Written by the API only (the advisor's socket) and read by the
    player's stream: it goes through PostgreSQL, so any replica's stream delivers it. No
    workflow reads it."""

    __tablename__ = "advice"
    __table_args__ = (
        UniqueConstraint(
            "scope_id",
            "table_id",
            "player_id",
            "hand_number",
            "turn",
            name="advice_scope_id_table_id_player_id_hand_number_turn_key",
        ),
    )

    id: int | None = Field(default=None, primary_key=True, sa_type=BigInteger)
    scope_id: str = Field(max_length=64)
    """The tournament's id (a cash room's id once rooms take advisors)."""
    table_id: str = Field(default="", max_length=120, sa_column_kwargs={"server_default": ""})
    """The table (workflow id) whose hand and turn it is; "" in rows from before it."""
    player_id: str = Field(max_length=120)
    hand_number: int = Field(sa_type=BigInteger)
    turn: int
    advisor_agent_id: str = Field(max_length=100)
    action: str = Field(max_length=20)
    amount: int | None = _chips(default=None, nullable=True)
    reason: str = Field(max_length=280)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class RoomAdvisor(SQLModel, table=True):
    """A copilot cash room's advisor binding (docs/copilot.md): the advisor agent a person named
    when they joined, written by the API once the room took the join (the room's workflow
    knows nothing of advisors). A later join of the same player replaces it."""

    __tablename__ = "room_advisors"

    room_id: str = Field(primary_key=True, max_length=64)
    player_id: str = Field(primary_key=True, max_length=120)
    advisor_agent_id: str = Field(index=True, max_length=100)
    bound_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
