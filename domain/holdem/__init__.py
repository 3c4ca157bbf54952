"""The No-Limit Hold'em hand engine: pure, deterministic, dealt from a deck it is given.

Start a hand with ``start_hand`` (table view) or ``Hand.start`` (per-player lists), ask
``hand.actor_seat`` and ``hand.legal_actions()``, apply ``hand.act(seat, kind, amount)`` until
``hand.over``, then read ``hand_record(hand)``. ``hand.to_dict()``/``Hand.from_dict()`` carry it.
"""

from domain.holdem.betting import ActionKind, LegalActions
from domain.holdem.cards import ALL_CARDS
from domain.holdem.hand import STREETS, Hand
from domain.holdem.positions import ButtonPositions, first_positions, next_positions
from domain.holdem.record import (
    actor_legal,
    hand_record,
    private_parts,
    public_view,
    viewer_view,
)
from domain.holdem.table import AnteMode, start_hand

__all__ = [
    "ALL_CARDS",
    "STREETS",
    "ActionKind",
    "AnteMode",
    "ButtonPositions",
    "Hand",
    "LegalActions",
    "actor_legal",
    "first_positions",
    "hand_record",
    "next_positions",
    "private_parts",
    "public_view",
    "start_hand",
    "viewer_view",
]
