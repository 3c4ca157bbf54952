"""Hold'em hand strength: the best five of seven cards, as one comparable integer.

Evaluation comes from eval7 (a maintained C extension, ~1 µs per 7-card hand on our machines,
against ~210 µs for pokerkit's ``StandardHighHand``; see bench/evaluators.py). ``eval7.evaluate``
is a pure function of its cards: no global state, no randomness, no I/O, so it is replay-safe in
a Temporal workflow. We import only ``evaluate``/``handtype`` and ``Card``; eval7's ``Deck``
(which shuffles) is never used. pokerkit's ``State`` (whose ``create_state`` calls the
module-level ``random.shuffle``) is not used by the domain at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import eval7

from domain.holdem.cards import ALL_CARDS

_CARDS = {card: eval7.Card(card) for card in ALL_CARDS}


def hand_strength(hole: Sequence[str], board: Sequence[str]) -> int:
    """Higher is better; equal values split the pot.

    >>> royal = hand_strength(["As", "Ks"], ["Qs", "Js", "Ts", "2c", "3d"])
    >>> pair = hand_strength(["Ah", "Ad"], ["Qs", "Js", "9c", "2c", "3d"])
    >>> royal > pair
    True
    """
    return int(eval7.evaluate([_CARDS[card] for card in (*hole, *board)]))


def hand_name(strength: int) -> str:
    """>>> hand_name(hand_strength(["Ah", "Ad"], ["Qs", "Js", "9c", "2c", "3d"]))
    'Pair'
    """
    return str(eval7.handtype(strength))
