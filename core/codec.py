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

Each payload is also bound to the workflow it belongs to (security review, "context as
associated data"). The SDK hands the codec a serialization context on every path
(``with_context``): the target workflow of a start, signal, Update, query or result, the child
for a child's input and result, the activity (its workflow, type and chosen id) for an
activity's input, result and heartbeats. The codec writes the binding into the payload's
``encryption-context`` header and seals with it as AES-GCM associated data, so the header
cannot be changed without the tag failing. A decode under a context refuses a payload bound to
another workflow (``PayloadContextError``): someone who can write to Temporal but has no key
can no longer lift a sealed Update, signal or start input from one tournament's history and
replay it into another (a victim "registering" for a tournament they never chose). A decode
with no context (the UI's codec endpoint, which only displays) checks the tag against the
header it finds. Payloads sealed before binding (no header) open under a context only with
``SNG_CODEC_ACCEPT_UNBOUND=true``, a migration switch like the plaintext one.

What binding cannot stop: replaying a payload into the *same* workflow (the same register
Update, or a table's report, again). The workflows' own idempotency answers that (one entry
per owner, update ids, the re-registration cooldown; reports signed and taken once each, in
hand order; receipts checked against their move: security review N1).

A payload of ``COMPRESS_FROM`` bytes or more is deflated (zlib) before it is sealed and
says so in its ``encryption-compression`` header, which is sealed with it as associated data
too. Only a large tournament's payloads get there: its carried state at continue-as-new, its
view (the ``state`` query, the operators' Updates' results, the workflow's result) and the
read model's entrant parts of 1,000 rows. At 10,000 entrants the carried state is ~3.5 MB of
JSON, past Temporal's 2 MB limit, and ~0.6 MB deflated (docs/capacity.md). Deflating before
encrypting can let someone who sees ciphertext sizes and chooses part of the plaintext learn
something of the rest (CRIME); here the sizes are Temporal's to see, the chosen part would be
a player's own id, and what shares a payload with it are report secrets of 64 random hex
digits that a continue-as-new carries once per run: docs/security.md weighs it.

Keys come from settings (``SNG_CODEC_KEY``, base64 of 32 bytes, and ``SNG_CODEC_KEY_ID``;
retired keys in ``SNG_CODEC_PREVIOUS_KEYS`` as ``id=base64`` pairs). Without a configured key a
dev or test process uses ``<data dir>/codec.key``, created once by whichever process needs it
first and reused by every later run; prod refuses to start without a key (see settings).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import logging
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ActivitySerializationContext,
    EncodingPayloadConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from core.settings import Settings

ENCODING = b"binary/encrypted"
KEY_ID_HEADER = "encryption-key-id"
NONCE_BYTES = 12
KEY_BYTES = 32
SALT_BYTES = 16
SCHEME_HEADER = "encryption-scheme"
SCHEME = b"hkdf-aes256gcm"
CONTEXT_HEADER = "encryption-context"
AAD_PREFIX = b"sng payload context v1\x00"
VALUE_AAD_PREFIX = b"sng sealed value v1\x00"
HKDF_INFO = b"sng payload codec v2"
COMPRESSION_HEADER = "encryption-compression"
COMPRESSION = b"zlib"
COMPRESSED_AAD = b"\x00compression zlib"
COMPRESS_FROM = 64 * 1024
"""Serialised payloads this large or larger are deflated before sealing (a few per hand are
a tenth of it: a hand's record and report)."""
INFLATED_MAX = 64 * 1024 * 1024
"""No sealed payload inflates past this (ours stay under Temporal's 2 MB deflated)."""
DEV_KEY_FILE = "codec.key"
REFUSED_ENCODING = "binary/sng-refused"

log = logging.getLogger("core.codec")


class RefusedPayloadError(ValueError):
    """A payload the codec will not open (every refusal below)."""


class CodecKeyError(RefusedPayloadError):
    """A key that is missing, malformed or unknown: refuse rather than guess."""


class TamperedPayloadError(RefusedPayloadError):
    """A sealed payload whose tag does not verify: another key, or altered bytes."""


class UnsealedPayloadError(RefusedPayloadError):
    """A payload that is not sealed by us: refused, since only a holder of the key can seal.

    Encryption is the codec's authentication too: anyone who reaches the Temporal frontend can
    write payloads, but only a process with the key writes sealed ones, so a workflow never
    acts on a plaintext input, signal or Update (security review C2). The refusal fails the
    workflow task (Temporal retries it; the workflow's code never sees the payload).
    """


class PayloadContextError(RefusedPayloadError):
    """A sealed payload presented to a workflow it was not sealed for (or, outside a migration
    window, one sealed before payloads were bound to their workflow)."""


def context_header(context: SerializationContext | None) -> bytes | None:
    """The bytes a payload is bound to, or ``None`` where the SDK gives no context (a
    context-free call; the UI's codec endpoint).

    - a workflow's own payloads (start, signals, Updates, queries, result; a child's under the
      child's id): ``["workflow","<namespace>","<workflow id>"]``;
    - an activity's input, result, failure and heartbeats: ``["activity","<namespace>",
      "<workflow id>","<activity type>","<activity id>"]``, so a result sealed for one activity
      does not answer another (security review N1: whoever polls the task queue could answer a
      fee's activity with another entry's receipt). The id is the one the workflow chose; an id
      the server numbered (all digits) is known to the activity's worker but not to the
      workflow's codec, so it binds as ``""`` on both sides.
    """
    if isinstance(context, WorkflowSerializationContext):
        parts = ["workflow", context.namespace, context.workflow_id]
    elif isinstance(context, ActivitySerializationContext) and context.workflow_id:
        chosen = context.activity_id if not (context.activity_id or "").isdigit() else ""
        parts = [
            "activity",
            context.namespace,
            context.workflow_id,
            context.activity_type or "",
            chosen or "",
        ]
    elif isinstance(context, ActivitySerializationContext) and context.activity_id:
        parts = ["activity", context.namespace, context.activity_id]
    else:
        return None
    return json.dumps(parts, separators=(",", ":")).encode()


SCHEDULED_RUN = re.compile(r"(?P<schedule>.+)-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
"""A run a Temporal Schedule started: ``<the schedule action's workflow id>-<its tick>``."""


def scheduled_run_of(header: bytes | None) -> tuple[str, str] | None:
    """``(namespace, schedule's workflow id)`` when ``header`` binds a workflow a Schedule
    started, else None. Temporal hands each such run the previous run's result (the last
    completion result), sealed for the previous run's id: runs of one schedule open each
    other's payloads, so that result is not refused on every tick (issue 41). Only the payout
    reconciler is scheduled; its input and result carry no secret and move nothing."""
    if header is None:
        return None
    try:
        kind, namespace, workflow_id = json.loads(header)
    except (ValueError, TypeError):
        return None
    found = SCHEDULED_RUN.fullmatch(workflow_id) if kind == "workflow" else None
    return (namespace, found.group("schedule")) if found else None


def legacy_activity_header(context: SerializationContext | None) -> bytes | None:
    """What an activity's payloads were bound to before activities had their own binding
    (their workflow's bytes): accepted only in the migration window (``accept_unbound``)."""
    if isinstance(context, ActivitySerializationContext) and context.workflow_id:
        return json.dumps(
            ["workflow", context.namespace, context.workflow_id], separators=(",", ":")
        ).encode()
    return None


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


def ensure_dev_key(data_dir: Path, name: str = DEV_KEY_FILE) -> bytes:
    """Read ``<data_dir>/codec.key`` (or ``name``), creating it (mode 0600) if nobody has yet.

    The worker and the API may both get here first on a fresh data dir; the key is written to
    a private temporary file and linked into place, so a reader never sees a half-written key
    and exactly one writer wins.
    """
    path = data_dir / name
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        tmp = data_dir / f".{name}.{os.getpid()}"
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


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    """Seal every payload with the current key, bound to its workflow; open any payload sealed
    by a known key, for the workflow it was sealed for."""

    def __init__(
        self,
        key_id: str,
        key: bytes,
        previous: Mapping[str, bytes] | None = None,
        *,
        accept_plaintext: bool = False,
        accept_unbound: bool = False,
    ):
        super().__init__()
        self.key_id = key_id
        # Only for a migration window (SNG_CODEC_ACCEPT_PLAINTEXT, docs/security.md), and for
        # showing operators what a payload says (the UI's codec endpoint, which decides
        # nothing).
        self.accept_plaintext = accept_plaintext
        # Only for a migration window over histories sealed before binding
        # (SNG_CODEC_ACCEPT_UNBOUND).
        self.accept_unbound = accept_unbound
        self._current_key = key
        self._keys = {**(previous or {}), key_id: key}
        self._by_id = {kid: AESGCM(k) for kid, k in self._keys.items()}
        self._context: bytes | None = None
        self._legacy_context: bytes | None = None

    def keys(self) -> list[bytes]:
        """The current key, then the previous ones (what other bindings derive theirs from)."""
        return [self._current_key, *(k for k in self._keys.values() if k != self._current_key)]

    def with_context(self, context: SerializationContext) -> EncryptionCodec:
        """This codec bound to ``context`` (the SDK calls it per workflow, activity and call;
        the keys are shared, only the binding differs)."""
        bound = copy.copy(self)
        bound._context = context_header(context)
        bound._legacy_context = legacy_activity_header(context)
        return bound

    async def encode(self, payloads: Iterable[Payload]) -> list[Payload]:
        metadata = {
            "encoding": ENCODING,
            KEY_ID_HEADER: self.key_id.encode(),
            SCHEME_HEADER: SCHEME,
        }
        if self._context is not None:
            metadata[CONTEXT_HEADER] = self._context
        out = []
        for p in payloads:
            data = p.SerializeToString()
            if len(data) < COMPRESS_FROM:
                out.append(Payload(metadata=metadata, data=self._seal(data, self._aad())))
                continue
            deflated = {**metadata, COMPRESSION_HEADER: COMPRESSION}
            sealed = self._seal(zlib.compress(data, 1), self._aad(compressed=True))
            out.append(Payload(metadata=deflated, data=sealed))
        return out

    def _aad(self, header: bytes | None = None, *, compressed: bool = False) -> bytes | None:
        bound = self._context if header is None else header
        aad = None if bound is None else AAD_PREFIX + bound
        if compressed:  # the header is sealed too: dropping or adding it fails the tag
            aad = (aad or b"") + COMPRESSED_AAD
        return aad

    async def decode(self, payloads: Iterable[Payload]) -> list[Payload]:
        """What the SDK calls. A payload this codec refuses becomes a *refused* payload (its
        reason inside) instead of an exception: the SDK then refuses that one input where it
        is used (an Update is rejected, a signal dropped, a start fails its task), rather than
        failing every workflow task that carries it. Raising here would let anyone who can
        write to Temporal, key or not, freeze a tournament with one bad signal."""
        out: list[Payload] = []
        for p in payloads:
            try:
                out.append(self._open_one(p))
            except RefusedPayloadError as err:
                log.warning("codec refused a payload: %s", err)
                out.append(refused(str(err)))
        return out

    async def open(self, payloads: Iterable[Payload]) -> list[Payload]:
        """Open every payload or raise (the UI's codec endpoint, tools and tests)."""
        return [self._open_one(p) for p in payloads]

    def _open_one(self, p: Payload) -> Payload:
        if p.metadata.get("encoding", b"") != ENCODING:
            if not self.accept_plaintext:
                raise UnsealedPayloadError(
                    "refusing a payload that is not sealed with the deployment's codec key"
                    " (SNG_CODEC_ACCEPT_PLAINTEXT=true only while migrating old histories)"
                )
            return p  # written before encryption was on (the migration window)
        key_id = p.metadata.get(KEY_ID_HEADER, b"").decode(errors="replace")
        aead = self._by_id.get(key_id)
        if aead is None:
            raise CodecKeyError(
                f"payload sealed with unknown key id {key_id!r}; "
                f"list it in SNG_CODEC_PREVIOUS_KEYS (current key id {self.key_id!r})"
            )
        header = p.metadata.get(CONTEXT_HEADER)
        self._check_binding(header)
        if p.metadata.get(SCHEME_HEADER, b"") == SCHEME:
            salt, rest = p.data[:SALT_BYTES], p.data[SALT_BYTES:]
            aead = AESGCM(_subkey(self._keys[key_id], salt))
        else:  # sealed before per-payload subkeys: the key itself
            rest = p.data
        compression = p.metadata.get(COMPRESSION_HEADER)
        if compression not in (None, COMPRESSION):
            raise TamperedPayloadError(f"payload under unknown compression {compression!r}")
        # The tag covers the headers: a payload whose binding or compression was rewritten
        # does not open.
        aad = None if header is None else AAD_PREFIX + header
        if compression is not None:
            aad = (aad or b"") + COMPRESSED_AAD
        try:
            data = aead.decrypt(rest[:NONCE_BYTES], rest[NONCE_BYTES:], aad)
            if compression is not None:
                inflater = zlib.decompressobj()
                data = inflater.decompress(data, INFLATED_MAX)
                if inflater.unconsumed_tail or not inflater.eof:
                    raise ValueError("the payload inflates past its bound, or is cut short")
            return Payload.FromString(data)
        except (InvalidTag, ValueError, DecodeError, zlib.error) as err:
            raise TamperedPayloadError(
                f"payload under key {key_id!r} does not open (wrong key, or altered): {err!r}"
            ) from err

    def _check_binding(self, header: bytes | None) -> None:
        if self._context is None:
            return  # no workflow to compare with (display): the tag alone vouches for it
        if header is None:
            if self.accept_unbound:
                return
            raise PayloadContextError(
                "refusing a payload sealed without a workflow binding"
                " (SNG_CODEC_ACCEPT_UNBOUND=true only while migrating old histories)"
            )
        if header == self._context or (self.accept_unbound and header == self._legacy_context):
            return
        run = scheduled_run_of(header)
        if run is None or run != scheduled_run_of(self._context):
            raise PayloadContextError(
                f"refusing a payload sealed for {header.decode(errors='replace')}"
                f" presented to {self._context.decode(errors='replace')}"
            )

    def seal_value(self, data: bytes, binding: bytes) -> str:
        """Seal bytes kept outside Temporal (the read store's private parts: a seat's hole
        cards) under the current key, bound to ``binding`` as associated data (what the value
        belongs to, so it cannot be moved to another row). Text: ``<key id>.<base64>``."""
        sealed = self._seal(data, VALUE_AAD_PREFIX + binding)
        return self.key_id + "." + base64.urlsafe_b64encode(sealed).decode()

    def open_value(self, sealed: str, binding: bytes) -> bytes:
        """Open what ``seal_value`` sealed for ``binding``; raises a ``RefusedPayloadError``."""
        key_id, _, encoded = sealed.rpartition(".")
        key = self._keys.get(key_id)
        if key is None:
            raise CodecKeyError(f"value sealed with unknown key id {key_id!r}")
        try:
            raw = base64.urlsafe_b64decode(encoded)
            salt, rest = raw[:SALT_BYTES], raw[SALT_BYTES:]
            aead = AESGCM(_subkey(key, salt))
            return aead.decrypt(rest[:NONCE_BYTES], rest[NONCE_BYTES:], VALUE_AAD_PREFIX + binding)
        except (InvalidTag, ValueError, binascii.Error) as err:
            raise TamperedPayloadError(f"sealed value does not open: {err!r}") from err

    def _seal(self, data: bytes, aad: bytes | None) -> bytes:
        salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
        aead = AESGCM(_subkey(self._current_key, salt))
        return salt + nonce + aead.encrypt(nonce, data, aad)


def refused(reason: str) -> Payload:
    """The stand-in for a payload the codec refused: no converter but ours reads it, and ours
    only raises, so the input is refused where the SDK converts it."""
    return Payload(metadata={"encoding": REFUSED_ENCODING.encode()}, data=reason.encode())


class RefusedPayloadConverter(EncodingPayloadConverter):
    """Turns a refused payload back into its refusal when something tries to use it."""

    @property
    def encoding(self) -> str:
        return REFUSED_ENCODING

    def to_payload(self, value: Any) -> Payload | None:
        return None  # never writes one

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        raise RefusedPayloadError(payload.data.decode(errors="replace"))


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
        accept_unbound=settings.codec_accept_unbound,
    )


if __name__ == "__main__":
    print(new_key())
