"""L10 (security review): one AES-GCM key and random 96-bit nonces for every payload.

With every payload (query results included) sealed under the same key, random nonces reach
NIST's 2^32-invocation bound within days at our rate, past which a nonce repeat (and with it
the key's authenticity) becomes likely. Now each payload gets its own subkey (HKDF-SHA256 of
the key with a fresh 128-bit salt); payloads sealed the old way still open.
"""

from __future__ import annotations

import os

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload

from core.codec import ENCODING, KEY_ID_HEADER, EncryptionCodec

KEY = os.urandom(32)


async def test_each_payload_is_sealed_under_its_own_subkey() -> None:
    codec = EncryptionCodec("k1", KEY)
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"same text"')
    sealed = await codec.encode([plain] * 100)
    assert all(p.metadata["encryption-scheme"] == b"hkdf-aes256gcm" for p in sealed)
    salts = {p.data[:16] for p in sealed}
    assert len(salts) == 100  # a fresh salt, so a fresh key, per payload
    # Not sealed under the configured key itself: that key opens none of them directly.
    for p in sealed[:5]:
        for offset in (0, 16):
            with pytest.raises(InvalidTag):
                AESGCM(KEY).decrypt(p.data[offset : offset + 12], p.data[offset + 12 :], None)
    assert await codec.decode(sealed) == [plain] * 100


async def test_payloads_sealed_the_old_way_still_open() -> None:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"from an old history"')
    nonce = os.urandom(12)
    old = Payload(
        metadata={"encoding": ENCODING, KEY_ID_HEADER: b"k0"},
        data=nonce + AESGCM(KEY).encrypt(nonce, plain.SerializeToString(), None),
    )
    codec = EncryptionCodec("k1", os.urandom(32), {"k0": KEY})
    assert await codec.decode([old]) == [plain]  # the old key listed as a previous key
