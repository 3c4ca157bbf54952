"""The AES-GCM payload codec: what Temporal stores (history, queries' wire, results) is ciphertext.

Hole cards, deck seeds and hand records cross Temporal as payloads; with this codec the server,
its database and anyone reading history without the key see only ``binary/encrypted`` blobs.
The shape follows temporalio/samples-python ``encryption/``: each payload is serialised whole,
sealed with AES-256-GCM, and tagged with the id of the key that sealed it, so old payloads stay
readable after a rotation as long as their key is still listed.

Each payload is sealed under its own subkey, HKDF-SHA256 of the configured key with a fresh
128-bit salt (``encryption-scheme: hkdf-aes256gcm``), then a random 96-bit nonce: random nonces
under one AES-GCM key reach NIST's 2^32-message bound within days at our payload rate
(security review L10); with a subkey per payload the bound is per subkey and never
approached. Payloads sealed before (no scheme header: the key itself, a random nonce) still
open.

Keys come from settings (``SNG_CODEC_KEY``, base64 of 32 bytes, and ``SNG_CODEC_KEY_ID``;
retired keys in ``SNG_CODEC_PREVIOUS_KEYS`` as ``id=base64`` pairs). Without a configured key a
dev or test process uses ``<data dir>/codec.key``, created once by whichever process needs it
first and reused by every later run; prod refuses to start without a key (see settings).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from sng.settings import Settings

ENCODING = b"binary/encrypted"
KEY_ID_HEADER = "encryption-key-id"
NONCE_BYTES = 12
KEY_BYTES = 32
SALT_BYTES = 16
SCHEME_HEADER = "encryption-scheme"
SCHEME = b"hkdf-aes256gcm"
HKDF_INFO = b"sng payload codec v2"
DEV_KEY_FILE = "codec.key"


class CodecKeyError(ValueError):
    """A key that is missing, malformed or unknown: refuse rather than guess."""


class UnsealedPayloadError(ValueError):
    """A payload that is not sealed by us: refused, since only a holder of the key can seal.

    Encryption is the codec's authentication too: anyone who reaches the Temporal frontend can
    write payloads, but only a process with the key writes sealed ones, so a workflow never
    acts on a plaintext input, signal or Update (security review C2). The refusal fails the
    workflow task (Temporal retries it; the workflow's code never sees the payload).
    """


def parse_key(encoded: str, *, name: str = "SNG_CODEC_KEY") -> bytes:
    try:
        key = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise CodecKeyError(f"{name} is not valid base64") from None
    if len(key) != KEY_BYTES:
        raise CodecKeyError(f"{name} must be {KEY_BYTES} bytes (base64), got {len(key)}")
    return key


def parse_previous_keys(spec: str) -> dict[str, bytes]:
    """``"k1=BASE64,k0=BASE64"`` → ``{"k1": key, "k0": key}`` (decrypt-only keys)."""
    keys: dict[str, bytes] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key_id, sep, encoded = item.partition("=")
        if not sep or not key_id.strip():
            raise CodecKeyError("SNG_CODEC_PREVIOUS_KEYS entries look like id=base64")
        keys[key_id.strip()] = parse_key(encoded, name=f"previous key {key_id.strip()!r}")
    return keys


def new_key() -> str:
    """A fresh key, base64-encoded: what to put in SNG_CODEC_KEY."""
    return base64.b64encode(AESGCM.generate_key(bit_length=KEY_BYTES * 8)).decode()


def ensure_dev_key(data_dir: Path) -> bytes:
    """Read ``<data_dir>/codec.key``, creating it (mode 0600) if nobody has yet.

    The worker and the API may both get here first on a fresh data dir; the key is written to
    a private temporary file and linked into place, so a reader never sees a half-written key
    and exactly one writer wins.
    """
    path = data_dir / DEV_KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        tmp = data_dir / f".{DEV_KEY_FILE}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(new_key() + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process won; use its key
        finally:
            tmp.unlink()
    return parse_key(path.read_text(), name=str(path))


class EncryptionCodec(PayloadCodec):
    """Seal every payload with the current key; open any payload sealed by a known key."""

    def __init__(
        self,
        key_id: str,
        key: bytes,
        previous: Mapping[str, bytes] | None = None,
        *,
        accept_plaintext: bool = False,
    ):
        super().__init__()
        self.key_id = key_id
        # Only for a migration window (SNG_CODEC_ACCEPT_PLAINTEXT, docs/security.md), and for
        # showing operators what a payload says (the UI's codec endpoint, which decides
        # nothing).
        self.accept_plaintext = accept_plaintext
        self._current_key = key
        self._keys = {**(previous or {}), key_id: key}
        self._by_id = {kid: AESGCM(k) for kid, k in self._keys.items()}

    async def encode(self, payloads: Iterable[Payload]) -> list[Payload]:
        return [
            Payload(
                metadata={
                    "encoding": ENCODING,
                    KEY_ID_HEADER: self.key_id.encode(),
                    SCHEME_HEADER: SCHEME,
                },
                data=self._seal(p.SerializeToString()),
            )
            for p in payloads
        ]

    async def decode(self, payloads: Iterable[Payload]) -> list[Payload]:
        out: list[Payload] = []
        for p in payloads:
            if p.metadata.get("encoding", b"") != ENCODING:
                if not self.accept_plaintext:
                    raise UnsealedPayloadError(
                        "refusing a payload that is not sealed with the deployment's codec key"
                        " (SNG_CODEC_ACCEPT_PLAINTEXT=true only while migrating old histories)"
                    )
                out.append(p)  # written before encryption was on (the migration window)
                continue
            key_id = p.metadata.get(KEY_ID_HEADER, b"").decode()
            aead = self._by_id.get(key_id)
            if aead is None:
                raise CodecKeyError(
                    f"payload sealed with unknown key id {key_id!r}; "
                    f"list it in SNG_CODEC_PREVIOUS_KEYS (current key id {self.key_id!r})"
                )
            if p.metadata.get(SCHEME_HEADER, b"") == SCHEME:
                salt, rest = p.data[:SALT_BYTES], p.data[SALT_BYTES:]
                aead = AESGCM(_subkey(self._keys[key_id], salt))
            else:  # sealed before per-payload subkeys: the key itself
                rest = p.data
            out.append(
                Payload.FromString(aead.decrypt(rest[:NONCE_BYTES], rest[NONCE_BYTES:], None))
            )
        return out

    def _seal(self, data: bytes) -> bytes:
        salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
        aead = AESGCM(_subkey(self._current_key, salt))
        return salt + nonce + aead.encrypt(nonce, data, None)


def _subkey(key: bytes, salt: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=HKDF_INFO).derive(key)


def codec_for(settings: Settings, *, for_display: bool = False) -> EncryptionCodec:
    """The codec every client and worker of this deployment uses; ``for_display`` (the UI's
    codec endpoint) also passes plaintext through, so operators can see what was sent."""
    if settings.codec_key.get_secret_value():
        key = parse_key(settings.codec_key.get_secret_value())
    elif settings.env == "prod":
        raise CodecKeyError("SNG_CODEC_KEY is required in prod")  # settings refuse it earlier
    else:
        key = ensure_dev_key(settings.data_dir)
    return EncryptionCodec(
        settings.codec_key_id,
        key,
        parse_previous_keys(settings.codec_previous_keys.get_secret_value()),
        accept_plaintext=for_display or settings.codec_accept_plaintext,
    )


if __name__ == "__main__":
    print(new_key())
