"""The one catalogue of coded errors, shared by the domain, the workflows and the API.

Codes are the seed system's wire names. Workflows raise them as
``ApplicationError(type=code)``; the API maps each code to one HTTP status in exactly one
place (``api/errors.py``). Nobody matches on message text.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    # settings / structures
    INVALID_SETTINGS = "invalid_settings"
    """Tournament settings the schema or its cross-field rules refuse (``field`` names the first
    fault, e.g. ``blindStructure.increaseFactor``)."""
    INVALID_FIELD_SIZE = "invalid_field_size"
    """A prize-structure preview for a field size outside 1 .. the seats (``fieldSize``)."""
    # registration (seed: SnG tournaments, agent registration)
    TOURNAMENT_FULL = "tournament_full"
    """Every seat of the tournament is taken."""
    TOURNAMENT_ALREADY_REGISTERED = "tournament_already_registered"
    """The account (or the agent's owner) already holds an entry in this tournament (a
    re-entry while the player's entry is still in play, too)."""
    TOURNAMENT_NOT_IN_REGISTRATION = "tournament_not_in_registration"
    """The tournament no longer takes registrations, payments or leaves (it started, ended or was
    cancelled; an MTT's late registration has closed, or a paid entry tries to leave once play
    has started)."""
    TOURNAMENT_NOT_REGISTERED = "tournament_not_registered"
    """The caller holds no entry in this tournament."""
    TOURNAMENT_ENTRY_FEE_MISMATCH = "tournament_entry_fee_mismatch"
    """The amount paid is not the tournament's entry fee."""
    PAID_REGISTRATION_USE_REFUND_PATH = "paid_registration_use_refund_path"
    """A paid entry cannot be unregistered through the internal route: it leaves through the refund
    path."""
    HUMANS_NOT_ALLOWED_AT_AGENT_TABLE = "humans_not_allowed_at_agent_table"
    """A human registering for an agent-only tournament, or joining an agent-only room."""
    AGENT_NOT_ALLOWED_AT_HUMAN_TABLE = "agent_not_allowed_at_human_table"
    """An agent registering for (or joining a room of) humans: a human-only or copilot one."""
    TOURNAMENT_REGISTRATION_LIMIT = "tournament_registration_limit"
    """A player who registered and left the tournament its maximum number of times (5 entries),
    or a busted player who has made the MTT's ``maxReEntries`` re-entries already."""
    TOURNAMENT_REGISTRATION_COOLDOWN = "tournament_registration_cooldown"
    """A second or later come-back to one tournament before its cooldown ran out (10 s, doubling):
    ``Retry-After`` says when."""
    ADVISOR_REQUIRED = "advisor_required"
    """A copilot tournament's registration without a valid advisor agent of the caller's own."""
    ADVISOR_ON_NON_COPILOT_KIND = "advisor_on_non_copilot_kind"
    """An advisor named for a tournament that is not a copilot one."""
    NOT_AN_ADVISOR = "not_an_advisor"
    """An agent on a tournament's advisor stream that advises no player there (no entry names it
    as ``advisorAgentId``), or advice for a player it does not advise (docs/copilot.md)."""
    ADVISOR_CANNOT_ACT = "advisor_cannot_act"
    """An ``act`` (or ``seed``) on the advisor's stream: an advisor suggests, only the player acts
    (docs/copilot.md)."""
    ADVICE_ALREADY_GIVEN = "advice_already_given"
    """A second advice for a turn the advisor already advised on: the first one stands and is
    what the player was shown (docs/copilot.md)."""
    STAND_UP_NOT_ALLOWED_IN_TOURNAMENT = "stand_up_not_allowed_in_tournament"
    """Standing up from a running tournament: a tournament seat is played out (sitting out is
    automatic)."""
    TABLE_NOT_FOUND = "table_not_found"
    """No table with the id the body names (the internal routes)."""
    AGENT_NOT_FOUND = "agent_not_found"
    """No (live) agent with that id."""
    NOT_A_TOURNAMENT = "not_a_tournament"
    """The id names a cash room or another workflow, not a tournament (the internal routes)."""
    INVALID_STATE = "invalid_state"
    """The tournament, table or seat is not in a state that allows this now (e.g. ``sit-in`` while
    not sitting out)."""
    # play
    NOT_YOUR_TURN = "not_your_turn"
    """An action from a seat that is not the one to act."""
    ILLEGAL_ACTION = "illegal_action"
    """An action the seat may not take now: an unknown one, a check facing a bet, a raise past
    the round's cap (20) or when raising is closed."""
    AMOUNT_OUT_OF_RANGE = "amount_out_of_range"
    """A raise-to ``amount`` outside ``minRaiseTo`` .. ``maxRaiseTo`` (or missing where one is
    needed)."""
    STALE_TURN = "stale_turn"
    """An action for a turn (or hand) that is no longer the current one."""
    UNKNOWN_SEAT = "unknown_seat"
    """The caller (or the seat named) has no seat in this hand or at this table."""
    PLAYER_IN_TRANSIT = "player_in_transit"
    """A multi-table tournament is moving the caller between tables: on no table right now.
    Retry after ``retryAfterSeconds`` (docs/mtt.md, "The API's table lookup")."""
    TABLE_MOVED = "table_moved"
    """An action that names a table (``tableId``) the caller no longer sits at: a multi-table
    tournament moved them; nothing is applied (read the game state again)."""
    STALE_COMMITMENT = "stale_commitment"
    """A player's seed for a deck that is not the next hand's (docs/fairness.md)."""
    ALREADY_SEEDED = "already_seeded"
    """A second seed from one seat for one hand: the first one stands."""
    ALREADY_ACTED = "already_acted"
    """A second action for a turn the seat already sent one for (under another
    ``Idempotency-Key``, or none): the first one stands (security review N2)."""
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    """An ``Idempotency-Key`` sent again for the same turn with another action or amount:
    nothing is applied (the key's first action stands; security review N2)."""
    # cash rooms
    ROOM_FULL = "room_full"
    """Every seat of the cash room is taken."""
    ROOM_CLOSED = "room_closed"
    """The cash room is closed (or closing): it seats no one and deals no more hands."""
    SEAT_TAKEN = "seat_taken"
    """The seat asked for is held by another player."""
    ALREADY_SEATED = "already_seated"
    """The player already holds a seat in this room (the API answers a join as the seat held)."""
    OWNER_ALREADY_SEATED = "owner_already_seated"
    """A join by a player already seated: refused before it reaches history (so it spends no
    part of the room's Update budget); the API answers it as the seat held (200)."""
    LEAVE_PENDING = "leave_pending"
    """A leave by a player already leaving at the hand's end: the API answers 202 ``pending``."""
    ROOM_JOIN_COOLDOWN = "room_join_cooldown"
    """A player who left a room joins it again before their cooldown ran out (10 s, doubling
    with each leave in a row, at most 10 min): ``Retry-After`` says when (security review N2)."""
    # money
    INSUFFICIENT_FUNDS = "insufficient_funds"
    """The caller's balance does not cover the entry fee or buy-in."""
    # on-chain money (activities/chain.py ChainError: the same values)
    CHAIN_REVERTED = "chain_reverted"
    """The chain refused the money move (a definite revert: the caller's permit, allowance or
    funds)."""
    CHAIN_DEPOSIT_REFUSED = "chain_deposit_refused"
    """The vault refused the entry's deposit (already made for another tournament or owner, or the
    permit is invalid)."""
    CHAIN_REFUND_EXCEEDS_DEPOSIT = "chain_refund_exceeds_deposit"
    """A refund larger than what the entry deposited."""
    CHAIN_PAYOUT_CONFLICT = "chain_payout_conflict"
    """A payout intent already executed on chain with another recipient or amount."""
    CHAIN_UNAVAILABLE = "chain_unavailable"
    """The chain's JSON-RPC endpoint did not answer, or a transaction failed without a reproducible
    revert: retry."""
    CHAIN_NOT_MINED = "chain_not_mined"
    """A transaction was sent but not confirmed in time: retry (the same intent is never paid
    twice)."""
    # wallets (binding a wallet to an account: db/wallets.py)
    WALLET_NOT_BOUND = "wallet_not_bound"
    """A permit whose ``owner`` wallet is not bound to the caller's account (``permit.owner``)."""
    WALLET_BOUND_ELSEWHERE = "wallet_bound_elsewhere"
    """The wallet is bound to another account."""
    WALLET_CHALLENGE_INVALID = "wallet_challenge_invalid"
    """A wrong signature, or a challenge nonce that is not the caller's, already used or expired."""
    WALLET_LIMIT_REACHED = "wallet_limit_reached"
    """The account has its maximum of open challenges or bound wallets (5)."""
    # Agent Cards (the key an agent's hole cards are sealed to)
    CARD_KEY_LOCKED = "card_key_locked"
    """A change of the Agent Card's key while the agent is dealt into a running hand: it
    changes between hands only (security review N8)."""
    # service
    TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
    """Temporal, PostgreSQL or a worker did not answer (or the table has not published yet): nothing
    was applied, retry after ``Retry-After``."""
    WORKFLOW_UNREADABLE = "workflow_unreadable"
    """The workflow's state cannot be rebuilt (its history does not replay): operators see it
    flagged on the admin pages (docs/operations.md, a workflow that cannot make progress)."""
    # auth / request
    UNAUTHORIZED = "unauthorized"
    """No valid credential for this route."""
    FORBIDDEN = "forbidden"
    """The credential may not do this (a player where only an agent may, an agent where only its
    owner may)."""
    NOT_FOUND = "not_found"
    """No such route, tournament, room, hand or resource."""
    METHOD_NOT_ALLOWED = "method_not_allowed"
    """The route exists but not with this HTTP method."""
    PAYLOAD_TOO_LARGE = "payload_too_large"
    """The request body is larger than the API accepts."""
    RATE_LIMITED = "rate_limited"
    """Too many requests from this caller or address: ``Retry-After`` says when."""
    TOO_MANY_STREAMS = "too_many_streams"
    """Too many open SSE/WebSocket streams (this server's, this address's or this client's limit):
    close one first."""
    TOO_MANY_LONG_POLLS = "too_many_long_polls"
    """More than ``SNG_MAX_LONG_POLLS_PER_CLIENT`` (4) pre-play long-polls held by one client."""
    VALIDATION_ERROR = "validation_error"
    """A parameter or the body is malformed (``field`` names it); NUL characters anywhere
    included."""


class DomainError(Exception):
    """A refusal with a code, a human message and, when it concerns one, the field at fault.

    >>> e = DomainError(ErrorCode.INVALID_SETTINGS, "seats must be 2-10", field="seats")
    >>> (e.code, e.field, str(e))
    (<ErrorCode.INVALID_SETTINGS: 'invalid_settings'>, 'seats', 'seats must be 2-10')
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        field: str | None = None,
        retry_after_seconds: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.retry_after_seconds = retry_after_seconds
        """When the same call may succeed: the API sends it as ``Retry-After``."""
