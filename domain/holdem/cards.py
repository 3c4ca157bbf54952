"""Cards as two-character strings ("As", "Td", "2c") and the fixed order a deck is dealt in.

The engine never shuffles: it is handed a 52-card deck and deals it in the order documented in
docs/fairness.md — hole cards round-robin from the first seat left of the button (two passes),
then burn + three flop cards, burn + turn, burn + river.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.errors import DomainError, ErrorCode

RANKS = "23456789TJQKA"
SUITS = "cdhs"
#: The canonical order, used as the unshuffled deck by domain.deck.
ALL_CARDS: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
_VALID = frozenset(ALL_CARDS)


def is_card(text: str) -> bool:
    """>>> is_card("As"), is_card("1x"), is_card("as")
    (True, False, False)
    """
    return text in _VALID


def split_cards(text: str) -> list[str]:
    """Split concatenated cards ("AsKd7h") into a list; raises on anything that is not a card.

    >>> split_cards("AsKd7h")
    ['As', 'Kd', '7h']
    """
    if len(text) % 2:
        raise DomainError(ErrorCode.VALIDATION_ERROR, f"not a card string: {text!r}")
    cards = [text[k : k + 2] for k in range(0, len(text), 2)]
    for card in cards:
        if not is_card(card):
            raise DomainError(ErrorCode.VALIDATION_ERROR, f"not a card: {card!r}")
    return cards


def verify_deck(deck: Sequence[str]) -> None:
    """Raise unless ``deck`` is a permutation of the 52 cards."""
    if len(deck) != len(ALL_CARDS) or set(deck) != _VALID:
        raise DomainError(ErrorCode.VALIDATION_ERROR, "a deck must hold each of the 52 cards once")


def hole_card_index(player: int, card: int, player_count: int) -> int:
    """Deck position of a player's ``card``-th hole card (round-robin, two passes).

    >>> [hole_card_index(p, c, 3) for c in (0, 1) for p in range(3)]
    [0, 1, 2, 3, 4, 5]
    """
    return card * player_count + player


def board_indices(street: int, player_count: int) -> list[int]:
    """Deck positions of the cards a street adds to the board, after its burn card.

    >>> [board_indices(s, 2) for s in (1, 2, 3)]
    [[5, 6, 7], [9], [11]]
    """
    first = 2 * player_count
    if street == 1:
        return [first + 1, first + 2, first + 3]
    if street == 2:
        return [first + 5]
    if street == 3:
        return [first + 7]
    raise ValueError(f"street {street} deals no board cards")
