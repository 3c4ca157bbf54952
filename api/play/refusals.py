"""Every refusal a person can meet on the players' pages, as a sentence they can act on.

The pages call the JSON API (``window.sng.call``); a refusal comes back as ``{code, message}``
and ``window.sng.refusal`` shows the sentence for its code from the map ``base.html`` renders
as ``<script id="refusal-sentences" type="application/json">`` (a JSON block is not run, so
the Content-Security-Policy allows it). The API's own message stays the fallback for a code
not here. ``tests/api/test_play_refusals.py`` checks that every ``ErrorCode`` has a sentence
or is in ``NEVER_SHOWN`` (codes no page can provoke: operators', agents' and internal ones).
"""

from __future__ import annotations

import json

from domain.errors import ErrorCode

SENTENCES: dict[ErrorCode, str] = {
    ErrorCode.TOURNAMENT_FULL: "Every seat of this tournament is taken.",
    ErrorCode.TOURNAMENT_ALREADY_REGISTERED: "You are already registered for this tournament.",
    ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION: (
        "This tournament no longer takes registrations, payments or leaves."
    ),
    ErrorCode.TOURNAMENT_NOT_REGISTERED: "You are not registered for this tournament.",
    ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH: (
        "The amount paid is not this tournament's entry fee: reload the page and pay again."
    ),
    ErrorCode.HUMANS_NOT_ALLOWED_AT_AGENT_TABLE: "Only agents may play here.",
    ErrorCode.AGENT_NOT_ALLOWED_AT_HUMAN_TABLE: "Only people may play here, not agents.",
    ErrorCode.TOURNAMENT_REGISTRATION_LIMIT: (
        "You have registered for this tournament the most times allowed."
    ),
    ErrorCode.TOURNAMENT_REGISTRATION_COOLDOWN: (
        "You left this tournament a moment ago: wait a little before registering again."
    ),
    ErrorCode.ADVISOR_REQUIRED: (
        "A CoPilot table needs an advisor: choose one of your own agents that offers advice."
    ),
    ErrorCode.ADVISOR_ON_NON_COPILOT_KIND: (
        "Only CoPilot tables take an advisor: leave the advisor field empty."
    ),
    ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT: (
        "A tournament seat is played to the end: you cannot stand up once it has started."
    ),
    ErrorCode.AGENT_NOT_FOUND: "There is no agent with that id.",
    ErrorCode.INVALID_STATE: "That is not possible right now: reload the page to see why.",
    ErrorCode.NOT_YOUR_TURN: "It is not your turn.",
    ErrorCode.ILLEGAL_ACTION: "That action is not allowed now.",
    ErrorCode.AMOUNT_OUT_OF_RANGE: "That amount is outside what you may bet now.",
    ErrorCode.STALE_TURN: "That turn is over: the table has moved on.",
    ErrorCode.UNKNOWN_SEAT: "You have no seat at this table.",
    ErrorCode.PLAYER_IN_TRANSIT: "You are moving to another table: a moment, please.",
    ErrorCode.TABLE_MOVED: "You were moved to another table.",
    ErrorCode.ALREADY_ACTED: "You already acted on this turn: your first action stands.",
    ErrorCode.IDEMPOTENCY_KEY_REUSED: "You already acted on this turn: your first action stands.",
    ErrorCode.ROOM_FULL: "Every seat of this room is taken.",
    ErrorCode.ROOM_CLOSED: "This room is closed.",
    ErrorCode.SEAT_TAKEN: "That seat is taken: choose another, or leave the seat empty.",
    ErrorCode.ALREADY_SEATED: "You already have a seat in this room.",
    ErrorCode.OWNER_ALREADY_SEATED: "You already have a seat in this room.",
    ErrorCode.LEAVE_PENDING: "You are already leaving: you go when this hand ends.",
    ErrorCode.ROOM_JOIN_COOLDOWN: (
        "You left this room a moment ago: wait a little before joining again."
    ),
    ErrorCode.INSUFFICIENT_FUNDS: "Your balance is too low for this.",
    ErrorCode.CHAIN_REVERTED: "The chain refused the payment: check your wallet's funds.",
    ErrorCode.CHAIN_DEPOSIT_REFUSED: "The vault refused the deposit: sign the permit again.",
    ErrorCode.CHAIN_UNAVAILABLE: "The chain did not answer: try again in a moment.",
    ErrorCode.CHAIN_NOT_MINED: (
        "The transaction was not confirmed in time: try again (you are never charged twice)."
    ),
    ErrorCode.WALLET_NOT_BOUND: "Connect that wallet to your account first.",
    ErrorCode.WALLET_BOUND_ELSEWHERE: "That wallet belongs to another account.",
    ErrorCode.WALLET_CHALLENGE_INVALID: (
        "The wallet's signature did not check out: connect the wallet again."
    ),
    ErrorCode.WALLET_LIMIT_REACHED: "Your account has the most wallets allowed.",
    ErrorCode.TEMPORARILY_UNAVAILABLE: "The service is busy: nothing was done, try again.",
    ErrorCode.WORKFLOW_UNREADABLE: (
        "This game cannot go on right now: the operators have been told."
    ),
    ErrorCode.UNAUTHORIZED: "Your session has ended: sign in again.",
    ErrorCode.FORBIDDEN: "You may not do that.",
    ErrorCode.NOT_FOUND: "That no longer exists.",
    ErrorCode.RATE_LIMITED: "Too many requests: wait a moment and try again.",
    ErrorCode.TOO_MANY_STREAMS: "Too many pages are open: close one and reload.",
    ErrorCode.VALIDATION_ERROR: "That input is not valid: check the fields and try again.",
}
"""By code: what a person reads when the API refuses them on these pages."""

NEVER_SHOWN: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.INVALID_SETTINGS,  # operators create tournaments and rooms
        ErrorCode.INVALID_FIELD_SIZE,  # a preview parameter the pages never send
        ErrorCode.PAID_REGISTRATION_USE_REFUND_PATH,  # the internal route only
        ErrorCode.TABLE_NOT_FOUND,  # the internal routes only
        ErrorCode.NOT_A_TOURNAMENT,  # the internal routes only
        ErrorCode.STALE_COMMITMENT,  # seeds: agents' fairness protocol, not the pages
        ErrorCode.ALREADY_SEEDED,  # seeds, as above
        ErrorCode.CHAIN_REFUND_EXCEEDS_DEPOSIT,  # the worker's refund activity
        ErrorCode.CHAIN_PAYOUT_CONFLICT,  # the worker's payout activity
        ErrorCode.CARD_KEY_LOCKED,  # an agent's Agent Card
        ErrorCode.NOT_AN_ADVISOR,  # the advisor agent's own socket (docs/copilot.md)
        ErrorCode.ADVISOR_CANNOT_ACT,  # the advisor agent's own socket
        ErrorCode.ADVICE_ALREADY_GIVEN,  # the advisor agent's own socket
        ErrorCode.METHOD_NOT_ALLOWED,  # the pages' own calls use each route's method
        ErrorCode.PAYLOAD_TOO_LARGE,  # the pages send a few small fields
        ErrorCode.TOO_MANY_LONG_POLLS,  # the pages never long-poll
    }
)
"""Codes no page can provoke: the test keeps this list and ``SENTENCES`` covering them all."""


def sentences_json() -> str:
    """The map as JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped, so
    no sentence can close the element."""
    text = json.dumps({code.value: s for code, s in SENTENCES.items()}, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
