"""The worker-only deck key (core/deck_vault.py): what opens a sealed secret, and when a
worker refuses to start."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from core.codec import CodecKeyError, RefusedPayloadError, new_key
from core.deck_vault import DeckVault
from core.settings import Settings


def test_a_secret_opens_for_its_table_and_hand_only(tmp_path: Path) -> None:
    vault = DeckVault.from_settings(Settings(env="test", data_dir=tmp_path, deck_key=SecretStr("")))
    sealed = vault.seal(b"\x07" * 32, "table-t-1:4")
    assert b"\x07" * 32 not in sealed.encode() and "07" * 32 not in sealed
    assert vault.open(sealed, "table-t-1:4") == b"\x07" * 32
    with pytest.raises(RefusedPayloadError):
        vault.open(sealed, "table-t-1:5")  # moved to another hand
    other = DeckVault.from_settings(Settings(env="test", deck_key=SecretStr(new_key())))
    with pytest.raises(RefusedPayloadError):
        other.open(sealed, "table-t-1:4")
    # Dev and test keep one key file, so a resumed stack deals its carried decks.
    again = DeckVault.from_settings(Settings(env="test", data_dir=tmp_path, deck_key=SecretStr("")))
    assert again.open(sealed, "table-t-1:4") == b"\x07" * 32


def test_a_prod_worker_needs_its_own_deck_key() -> None:
    codec = new_key()
    prod = {"env": "test", "codec_key": SecretStr(codec)}
    with pytest.raises(CodecKeyError, match="differ"):
        DeckVault.from_settings(Settings(**prod, deck_key=SecretStr(codec)))
    with pytest.raises(CodecKeyError, match="SNG_DECK_KEY"):
        DeckVault.from_settings(Settings(env="test", deck_key=SecretStr("short")))
    unset = Settings(env="test", deck_key=SecretStr("")).model_copy(update={"env": "prod"})
    with pytest.raises(CodecKeyError, match="without SNG_DECK_KEY"):
        DeckVault.from_settings(unset)
