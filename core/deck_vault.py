"""The worker-only key that seals each deck's secret (docs/fairness.md, "Secrets during the
hand").

A table's deck is drawn by an activity; its secret (what the deck's salts and so every card
commitment come from) goes into Temporal history as the activity's result and in the carried
state (the next hand's deck), where the payload codec seals it, and where the codec's key
opens it again: the operator codec endpoint, the Temporal UI, anyone holding that key. So the
draw seals the secret once more, under this key, bound to the table and hand it was drawn
for, and only the workflow opens it, in memory, when it deals (a pure decryption, the same on
every replay). The key is never the codec's and never the API's: workers (``sng worker``,
``sng dev``'s) and replayers install it; nothing else reads ``SNG_DECK_KEY``.
"""

from __future__ import annotations

import json

from core.codec import (
    CodecKeyError,
    EncryptionCodec,
    ensure_dev_key,
    parse_key,
    parse_previous_keys,
)
from core.settings import Settings, get_settings

DEV_KEY_FILE = "deck.key"
KEY_ID = "deck1"


class DeckVault:
    """Seals and opens deck secrets under the deck key (AES-256-GCM, per-value salt)."""

    def __init__(self, key: bytes) -> None:
        self._codec = EncryptionCodec(KEY_ID, key)

    @classmethod
    def from_settings(cls, settings: Settings) -> DeckVault:
        encoded = settings.deck_key.get_secret_value()
        if encoded:
            key = parse_key(encoded, name="SNG_DECK_KEY")
        elif settings.env == "prod":
            raise CodecKeyError(
                "refusing to run a prod worker without SNG_DECK_KEY (python -m core.codec "
                "prints one; it must differ from SNG_CODEC_KEY)"
            )
        else:
            key = ensure_dev_key(settings.data_dir, DEV_KEY_FILE)
        codec_key = settings.codec_key.get_secret_value()
        codec_keys = [parse_key(codec_key)] if codec_key else []
        codec_keys += parse_previous_keys(settings.codec_previous_keys.get_secret_value()).values()
        if key in codec_keys:
            raise CodecKeyError(
                "SNG_DECK_KEY must differ from SNG_CODEC_KEY (and its previous keys)"
            )
        return cls(key)

    def seal(self, secret: bytes, drawn_for: str) -> str:
        """``secret`` sealed for the table and hand it was drawn for (``"<table>:<hand>"``)."""
        return self._codec.seal_value(secret, _binding(drawn_for))

    def open(self, sealed: str, drawn_for: str) -> bytes:
        """What ``seal`` sealed for ``drawn_for``; raises ``RefusedPayloadError`` otherwise."""
        return self._codec.open_value(sealed, _binding(drawn_for))


def _binding(drawn_for: str) -> bytes:
    return json.dumps(["deck", drawn_for]).encode()


_installed: DeckVault | None = None


def install(vault: DeckVault) -> None:
    """The vault this process's workers and replayers use (set before they start)."""
    global _installed
    _installed = vault


def ensure_installed(settings: Settings | None = None) -> DeckVault:
    """The installed vault, installing the one ``settings`` (or the environment's) name."""
    if _installed is None:
        install(DeckVault.from_settings(settings or get_settings()))
    assert _installed is not None
    return _installed


def current() -> DeckVault:
    """The installed vault (workflow code: a table opening its deck)."""
    if _installed is None:
        raise CodecKeyError("no deck key installed in this process (core/deck_vault.py)")
    return _installed
