"""Every money step's idempotency key, spelled once (the ledger's ``transfers.key``, the
vault's entry id, the payout intent's id). A key is what makes a retried step a no-op: the same
step must always build the same key, and two different steps never the same one. Changing a
format here would make every step taken under the old one look not taken: they are part of
the durable state, pinned by the doctests below."""

from __future__ import annotations


def entry_key(tournament_id: str, player_id: str, entry_no: int) -> str:
    """One entry's fee (a player who left and came back pays a new entry).

    >>> entry_key("t1", "alice", 1)
    't1:entry:alice:1'
    """
    return f"{tournament_id}:entry:{player_id}:{entry_no}"


def refund_key(tournament_id: str, player_id: str, entry_no: int) -> str:
    """>>> refund_key("t1", "alice", 1)
    't1:refund:alice:1'
    """
    return f"{tournament_id}:refund:{player_id}:{entry_no}"


def payout_intent_id(tournament_id: str, place: int) -> str:
    """One paid place's intent (``payout_intents``), whoever ends up holding it.

    >>> payout_intent_id("t1", 1)
    't1:payout:1'
    """
    return f"{tournament_id}:payout:{place}"


def payout_transfer_key(intent_id: str) -> str:
    """The ledger posting of a payout intent on the virtual backend.

    >>> payout_transfer_key("t1:payout:1")
    'payout:t1:payout:1'
    """
    return f"payout:{intent_id}"


def rake_key(tournament_id: str) -> str:
    """>>> rake_key("t1")
    't1:rake'
    """
    return f"{tournament_id}:rake"


def room_join_key(room_id: str, player_id: str, session: int) -> str:
    """A room seat's buy-in, per sitting (a player who left and rejoined sits anew).

    >>> room_join_key("room_a", "bob", 2)
    'room:room_a:join:bob:2'
    """
    return f"room:{room_id}:join:{player_id}:{session}"


def room_leave_key(room_id: str, player_id: str, session: int) -> str:
    """>>> room_leave_key("room_a", "bob", 2)
    'room:room_a:leave:bob:2'
    """
    return f"room:{room_id}:leave:{player_id}:{session}"


def room_hand_key(room_id: str, hand_no: int) -> str:
    """A room hand's chip movements, posted once.

    >>> room_hand_key("room_a", 7)
    'room:room_a:hand:7'
    """
    return f"room:{room_id}:hand:{hand_no}"


def credit_key(idempotency_key: str) -> str:
    """An operator's ledger credit, under the key the operator sent.

    >>> credit_key("grant-42")
    'credit:grant-42'
    """
    return f"credit:{idempotency_key}"
