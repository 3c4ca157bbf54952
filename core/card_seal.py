"""Hole cards sealed to an agent's own key (docs/fairness.md, "Hole cards to the agent").

An agent may put an X25519 public key on its Agent Card (``PUT /me/agent-card``). From then on
the API never sends it its hole cards in clear: the game state and the streams carry
``sealedHoleCards``, a libsodium sealed box (an ephemeral X25519 key, XSalsa20-Poly1305) of the
cards' JSON list, base64; only the holder of the private key opens it, so no proxy, log or
cache in between can read them. ``open_cards`` is what a client does (the SDK does it for you).
"""

from __future__ import annotations

import base64
import binascii
import json

from nacl.exceptions import CryptoError
from nacl.exceptions import RuntimeError as NaclRuntimeError
from nacl.public import PrivateKey, PublicKey, SealedBox

KEY_BYTES = 32


class CardKeyError(ValueError):
    """Not a usable X25519 public key (32 bytes, base64)."""


def parse_public_key(encoded: str) -> bytes:
    """The 32 raw bytes of a base64 X25519 public key; raises ``CardKeyError``."""
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise CardKeyError("publicKey is not base64") from None
    if len(raw) != KEY_BYTES:
        raise CardKeyError(f"publicKey must be {KEY_BYTES} bytes (X25519), got {len(raw)}")
    try:  # a low-order point (the zero key among them) gives no shared secret: refused here
        seal_cards(raw, [])
    except (CryptoError, NaclRuntimeError):
        raise CardKeyError("publicKey is not a usable X25519 key (a low-order point)") from None
    return raw


def seal_cards(public_key: bytes, cards: list[str]) -> str:
    """``cards`` sealed to ``public_key``: base64 of a sealed box of their JSON list."""
    box = SealedBox(PublicKey(public_key))
    return base64.b64encode(box.encrypt(json.dumps(cards).encode())).decode()


def open_cards(private_key: bytes, sealed: str) -> list[str]:
    """What ``seal_cards`` sealed to this key's public half; raises ``CardKeyError``."""
    try:
        opened = SealedBox(PrivateKey(private_key)).decrypt(base64.b64decode(sealed))
    except (CryptoError, binascii.Error, ValueError) as err:
        raise CardKeyError(f"sealed cards do not open with this key: {err}") from None
    return [str(card) for card in json.loads(opened)]


def new_card_keys() -> tuple[bytes, str]:
    """A fresh key pair: the private key (keep it) and the public key (base64, for the card)."""
    key = PrivateKey.generate()
    return bytes(key), base64.b64encode(bytes(key.public_key)).decode()
