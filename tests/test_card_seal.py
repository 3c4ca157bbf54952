"""Sealed hole cards (core/card_seal.py): what a card key must be, and who opens a box."""

from __future__ import annotations

import base64

import pytest
from nacl.public import PrivateKey

from core.card_seal import CardKeyError, open_cards, parse_public_key, seal_cards


def test_only_a_usable_x25519_key_is_taken() -> None:
    for bad in ("not base64!", base64.b64encode(b"short").decode()):
        with pytest.raises(CardKeyError):
            parse_public_key(bad)
    # Low-order points (0, 1, ...) give no shared secret: sealing to one fails, so a card
    # holding one would break every read of the agent's game state. Refused up front.
    for u in (0, 1):
        with pytest.raises(CardKeyError, match="low-order"):
            parse_public_key(base64.b64encode(u.to_bytes(32, "little")).decode())
    assert len(parse_public_key(base64.b64encode((2).to_bytes(32, "little")).decode())) == 32


def test_a_box_opens_with_its_own_key_only() -> None:
    mine, theirs = PrivateKey.generate(), PrivateKey.generate()
    sealed = seal_cards(bytes(mine.public_key), ["Ah", "Kd"])
    assert "Ah" not in base64.b64decode(sealed).decode(errors="replace")
    assert open_cards(bytes(mine), sealed) == ["Ah", "Kd"]
    with pytest.raises(CardKeyError):
        open_cards(bytes(theirs), sealed)
    assert seal_cards(bytes(mine.public_key), ["Ah", "Kd"]) != sealed  # a fresh box each time
