"""The deck for one hand: shuffled from a 32-byte secret seed, committed to by its SHA-256.

The algorithm (docs/fairness.md has it step by step so anyone can re-derive a shuffle):

1. Byte stream: ``SHA-256(seed || k)`` for k = 0, 1, 2, ... (k as 8-byte big-endian),
   concatenated; read it as 32-bit big-endian unsigned integers.
2. Start from the canonical deck ``2c 2d 2h 2s 3c ... As`` (rank-major, suits c d h s).
3. Fisher-Yates from the top: for i = 51 down to 1, draw u from the stream until
   ``u < 2**32 - (2**32 % (i + 1))`` (rejection sampling, so every j is equally likely), let
   ``j = u % (i + 1)`` and swap positions i and j.

The commitment is the lowercase hex SHA-256 of the seed. The seed itself is made by an activity
from a CSPRNG; this module has no randomness of its own.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from typing import TypeVar

from domain.errors import DomainError, ErrorCode
from domain.holdem.cards import ALL_CARDS

SEED_BYTES = 32
T = TypeVar("T")
_SPACE = 2**32


def verify_seed(seed: bytes) -> None:
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        raise DomainError(ErrorCode.VALIDATION_ERROR, "a deck seed is exactly 32 bytes")


def commitment(seed: bytes) -> str:
    """>>> commitment(bytes(32))
    '66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925'
    """
    verify_seed(seed)
    return hashlib.sha256(seed).hexdigest()


def _words(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        for k in range(0, len(block), 4):
            yield int.from_bytes(block[k : k + 4], "big")
        counter += 1


def fisher_yates(items: list[T], seed: bytes) -> list[T]:
    """``items`` shuffled in place by the seed's stream (and returned)."""
    verify_seed(seed)
    words = _words(seed)
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = _SPACE - (_SPACE % n)
        u = next(words)
        while u >= limit:
            u = next(words)
        j = u % n
        items[i], items[j] = items[j], items[i]
    return items


def shuffled_deck(seed: bytes) -> list[str]:
    """The deck a seed gives: a permutation of the 52 cards, the same on every machine.

    >>> deck = shuffled_deck(bytes(32))
    >>> len(set(deck)), deck[:4]
    (52, ['Ks', '7d', '7s', '8c'])
    """
    return fisher_yates(list(ALL_CARDS), seed)


def verify(seed: bytes, committed: str, deck: Sequence[str] | None = None) -> bool:
    """True when ``seed`` matches the published commitment (and re-derives ``deck`` if given).

    >>> seed = bytes(range(32))
    >>> verify(seed, commitment(seed), shuffled_deck(seed))
    True
    >>> verify(seed, commitment(bytes(32)))
    False
    """
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        return False
    if not hmac.compare_digest(commitment(seed), committed.lower()):
        return False
    return deck is None or list(deck) == shuffled_deck(seed)
