"""Deck from seed: a permutation, deterministic, matching the documented reference algorithm."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.deck import commitment, shuffled_deck, verify
from domain.holdem import ALL_CARDS

seeds = st.binary(min_size=32, max_size=32)


def _reference(seed: bytes) -> list[str]:
    # The snippet from docs/fairness.md, kept independent of domain/deck.py on purpose.
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    stream = (
        int.from_bytes(hashlib.sha256(seed + k.to_bytes(8, "big")).digest()[b : b + 4], "big")
        for k in range(10**6)
        for b in range(0, 32, 4)
    )
    for i in range(51, 0, -1):
        n = i + 1
        u = next(stream)
        while u >= 2**32 - 2**32 % n:
            u = next(stream)
        j = u % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@settings(max_examples=200)
@given(seeds)
def test_deck_is_the_documented_permutation(seed: bytes) -> None:
    deck = shuffled_deck(seed)
    assert sorted(deck) == sorted(ALL_CARDS)
    assert deck == _reference(seed) == shuffled_deck(seed)
    assert verify(seed, commitment(seed), deck)


@given(seeds, seeds)
def test_commitment_binds_the_seed(seed: bytes, other: bytes) -> None:
    if seed != other:
        assert not verify(other, commitment(seed))
        assert shuffled_deck(seed) != shuffled_deck(other)


def test_tampered_deck_fails_verification() -> None:
    seed = bytes(range(32))
    deck = shuffled_deck(seed)
    deck[0], deck[1] = deck[1], deck[0]
    assert not verify(seed, commitment(seed), deck)
    assert not verify(b"short", commitment(seed))


def test_first_cards_are_roughly_uniform() -> None:
    counts: dict[str, int] = {}
    for k in range(5200):
        top = shuffled_deck(k.to_bytes(32, "big"))[0]
        counts[top] = counts.get(top, 0) + 1
    assert len(counts) == 52 and max(counts.values()) < 3 * min(counts.values())
