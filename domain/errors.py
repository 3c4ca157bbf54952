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
    INVALID_FIELD_SIZE = "invalid_field_size"
    # registration (seed: SnG tournaments, agent registration)
    TOURNAMENT_FULL = "tournament_full"
    TOURNAMENT_ALREADY_REGISTERED = "tournament_already_registered"
    TOURNAMENT_NOT_IN_REGISTRATION = "tournament_not_in_registration"
    TOURNAMENT_NOT_REGISTERED = "tournament_not_registered"
    TOURNAMENT_ENTRY_FEE_MISMATCH = "tournament_entry_fee_mismatch"
    PAID_REGISTRATION_USE_REFUND_PATH = "paid_registration_use_refund_path"
    HUMANS_NOT_ALLOWED_AT_AGENT_TABLE = "humans_not_allowed_at_agent_table"
    AGENT_NOT_ALLOWED_AT_HUMAN_TABLE = "agent_not_allowed_at_human_table"
    TOURNAMENT_REGISTRATION_LIMIT = "tournament_registration_limit"
    TOURNAMENT_REGISTRATION_COOLDOWN = "tournament_registration_cooldown"
    """A player who registered and left the tournament's maximum number of times."""
    ADVISOR_REQUIRED = "advisor_required"
    ADVISOR_ON_NON_COPILOT_KIND = "advisor_on_non_copilot_kind"
    STAND_UP_NOT_ALLOWED_IN_TOURNAMENT = "stand_up_not_allowed_in_tournament"
    TABLE_NOT_FOUND = "table_not_found"
    AGENT_NOT_FOUND = "agent_not_found"
    NOT_A_TOURNAMENT = "not_a_tournament"
    INVALID_STATE = "invalid_state"
    # play
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_ACTION = "illegal_action"
    AMOUNT_OUT_OF_RANGE = "amount_out_of_range"
    STALE_TURN = "stale_turn"
    UNKNOWN_SEAT = "unknown_seat"
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
    ROOM_CLOSED = "room_closed"
    SEAT_TAKEN = "seat_taken"
    ALREADY_SEATED = "already_seated"
    OWNER_ALREADY_SEATED = "owner_already_seated"
    """A join by a player already seated: refused before it reaches history (so it spends no
    part of the room's Update budget); the API answers it as the seat held (200)."""
    LEAVE_PENDING = "leave_pending"
    """A leave by a player already leaving at the hand's end: the API answers 202 ``pending``."""
    ROOM_JOIN_COOLDOWN = "room_join_cooldown"
    """A player who left a room joins it again before their cooldown ran out (10 s, doubling
    with each leave in a row): ``Retry-After`` says when (security review N2)."""
    # money
    INSUFFICIENT_FUNDS = "insufficient_funds"
    # on-chain money (activities/chain.py ChainError: the same values)
    CHAIN_REVERTED = "chain_reverted"
    CHAIN_DEPOSIT_REFUSED = "chain_deposit_refused"
    CHAIN_REFUND_EXCEEDS_DEPOSIT = "chain_refund_exceeds_deposit"
    CHAIN_PAYOUT_CONFLICT = "chain_payout_conflict"
    CHAIN_UNAVAILABLE = "chain_unavailable"
    CHAIN_NOT_MINED = "chain_not_mined"
    # wallets (binding a wallet to an account: db/wallets.py)
    WALLET_NOT_BOUND = "wallet_not_bound"
    WALLET_BOUND_ELSEWHERE = "wallet_bound_elsewhere"
    WALLET_CHALLENGE_INVALID = "wallet_challenge_invalid"
    WALLET_LIMIT_REACHED = "wallet_limit_reached"
    # Agent Cards (the key an agent's hole cards are sealed to)
    CARD_KEY_LOCKED = "card_key_locked"
    """A change of the Agent Card's key while the agent is dealt into a running hand: it
    changes between hands only (security review N8)."""
    # service
    TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
    WORKFLOW_UNREADABLE = "workflow_unreadable"
    """The workflow's state cannot be rebuilt (its history does not replay): operators see it
    flagged on the admin pages (docs/operations.md, a workflow that cannot make progress)."""
    # auth / request
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_STREAMS = "too_many_streams"
    TOO_MANY_LONG_POLLS = "too_many_long_polls"
    VALIDATION_ERROR = "validation_error"


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
