"""The AES-GCM payload codec: round trips, key rotation, tampering, and where keys come from."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.api.common.v1 import Payload

from core.codec import (
    COMPRESS_FROM,
    COMPRESSION_HEADER,
    ENCODING,
    CodecKeyError,
    EncryptionCodec,
    RefusedPayloadError,
    TamperedPayloadError,
    UnsealedPayloadError,
    codec_for,
    ensure_dev_key,
    new_key,
    parse_previous_keys,
)
from core.settings import Settings
from core.temporal import data_converter


def payload(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=text.encode())


def key() -> bytes:
    return os.urandom(32)


async def test_round_trip_hides_the_plaintext_and_names_the_key() -> None:
    codec = EncryptionCodec("k1", key())
    [sealed] = await codec.encode([payload('{"deck_seed":"ab12"}')])
    assert sealed.metadata["encoding"] == ENCODING
    assert sealed.metadata["encryption-key-id"] == b"k1"
    assert b"deck_seed" not in sealed.data and b"json/plain" not in sealed.data
    assert await codec.decode([sealed]) == [payload('{"deck_seed":"ab12"}')]


async def test_the_same_payload_seals_differently_each_time() -> None:
    codec = EncryptionCodec("k1", key())
    a, b = await codec.encode([payload("x"), payload("x")])
    assert a.data != b.data  # a fresh nonce per payload


async def test_unencrypted_payloads_are_refused_unless_migrating() -> None:
    """Security review C2: sealing is the codec's authentication, so plaintext fails closed."""
    plain = payload("carry: pay me")
    with pytest.raises(UnsealedPayloadError, match="not sealed"):
        await EncryptionCodec("k1", key()).open([plain])
    # The documented migration switch, and the UI's display codec, pass it through.
    assert await EncryptionCodec("k1", key(), accept_plaintext=True).decode([plain]) == [plain]


async def test_rotation_reads_old_payloads_and_writes_with_the_new_key() -> None:
    old, new = key(), key()
    [sealed_old] = await EncryptionCodec("k1", old).encode([payload("hand 1")])
    rotated = EncryptionCodec("k2", new, {"k1": old})
    assert await rotated.decode([sealed_old]) == [payload("hand 1")]
    [sealed_new] = await rotated.encode([payload("hand 2")])
    assert sealed_new.metadata["encryption-key-id"] == b"k2"
    with pytest.raises(CodecKeyError, match="unknown key id 'k2'"):
        await EncryptionCodec("k1", old).open([sealed_new])


async def test_a_wrong_key_or_a_flipped_bit_is_refused() -> None:
    codec = EncryptionCodec("k1", key())
    [sealed] = await codec.encode([payload("secret")])
    with pytest.raises(TamperedPayloadError, match="does not open"):
        await EncryptionCodec("k1", key()).open([sealed])
    tampered = Payload(
        metadata=sealed.metadata, data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    )
    with pytest.raises(TamperedPayloadError):
        await codec.open([tampered])


async def test_a_large_payload_is_deflated_under_the_seal_and_reads_back() -> None:
    """From ``COMPRESS_FROM`` bytes on, a payload is deflated before sealing, and says so in
    a header that is sealed too: dropping it or adding it to a small payload fails the tag."""
    codec = EncryptionCodec("k1", key())
    big = payload('{"entrants": [' + ",".join(f'"player-{i}"' for i in range(20_000)) + "]}")
    small = payload('"small"')
    assert big.ByteSize() >= COMPRESS_FROM
    sealed_big, sealed_small = await codec.encode([big, small])
    assert sealed_big.metadata[COMPRESSION_HEADER] == b"zlib"
    assert COMPRESSION_HEADER not in sealed_small.metadata
    assert len(sealed_big.data) < big.ByteSize() // 4
    assert await codec.open([sealed_big, sealed_small]) == [big, small]
    stripped = Payload(data=sealed_big.data)
    stripped.metadata.update(
        {k: v for k, v in sealed_big.metadata.items() if k != COMPRESSION_HEADER}
    )
    added = Payload(data=sealed_small.data)
    added.metadata.update({**sealed_small.metadata, COMPRESSION_HEADER: b"zlib"})
    other = Payload(data=sealed_big.data)
    other.metadata.update({**sealed_big.metadata, COMPRESSION_HEADER: b"gzip"})
    for altered in (stripped, added, other):
        with pytest.raises(TamperedPayloadError):
            await codec.open([altered])


async def test_a_ten_thousand_entrant_tournament_state_stays_under_temporals_limit() -> None:
    """The state a 10,000-entrant MTT carries across continue-as-new (and its view, which
    queries and results return) is ~3.5 MB of JSON, past Temporal's 2 MB payload limit;
    through the deployment's converter it is sealed deflated, well under it."""
    from tests.sizing import large_tournament_state

    state = large_tournament_state(10_000)
    converter = data_converter(Settings(_env_file=None))  # type: ignore[call-arg]
    (plain,) = converter.payload_converter.to_payloads([state])
    assert plain.ByteSize() > 2 * 1024 * 1024
    (sealed,) = await converter.encode([state])
    assert sealed.ByteSize() < 1024 * 1024, sealed.ByteSize()
    (back,) = await converter.decode([sealed], [type(state)])
    assert back == state


async def test_what_the_sdk_gets_for_a_refused_payload_is_a_refusal_not_a_crash() -> None:
    """The SDK's decode never raises for a bad payload (that would fail every workflow task
    carrying it, freezing the workflow): it hands back a stand-in that the converter refuses
    where the value is used, with the codec's reason."""
    codec = EncryptionCodec("k1", key())
    [good] = await codec.encode([payload('"fine"')])
    garbage = Payload(metadata=good.metadata, data=b"\x00" * 40)
    out = await codec.decode([good, payload("plain"), garbage])
    assert out[0] == payload('"fine"')
    assert [p.metadata["encoding"] for p in out[1:]] == [b"binary/sng-refused"] * 2
    converter = data_converter(Settings(_env_file=None)).payload_converter  # type: ignore[call-arg]
    assert converter.from_payloads([out[0]]) == ["fine"]
    with pytest.raises(RefusedPayloadError, match="not sealed"):
        converter.from_payloads([out[1]])


def test_previous_keys_parse_and_refuse_garbage() -> None:
    a, b = new_key(), new_key()
    assert set(parse_previous_keys(f"k0={a}, k1={b}")) == {"k0", "k1"}
    assert parse_previous_keys("") == {}
    with pytest.raises(CodecKeyError):
        parse_previous_keys("k0")
    with pytest.raises(CodecKeyError):
        parse_previous_keys("k0=" + base64.b64encode(b"short").decode())


def test_dev_key_is_created_once_private_and_reused(tmp_path: Path) -> None:
    first = ensure_dev_key(tmp_path / "data")
    path = tmp_path / "data" / "codec.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_dev_key(tmp_path / "data") == first and len(first) == 32
    assert [p.name for p in path.parent.iterdir()] == ["codec.key"]


async def test_dev_settings_without_a_key_use_the_data_dir_key(tmp_path: Path) -> None:
    s = Settings(env="dev", data_dir=tmp_path, codec_key="", _env_file=None)  # type: ignore[call-arg]
    [sealed] = await codec_for(s).encode([payload("x")])
    again = Settings(env="dev", data_dir=tmp_path, codec_key="", _env_file=None)  # type: ignore[call-arg]
    assert await data_converter(again).payload_codec.decode([sealed]) == [payload("x")]  # type: ignore[union-attr]


def test_prod_refuses_to_start_without_a_codec_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SNG_CODEC_KEY", raising=False)
    strong = {
        "admin_key": "a" * 32,
        "internal_key": "i" * 32,
        "codec_endpoint_key": "c" * 32,
        "jwt_secret": "j" * 32,
    }
    with pytest.raises(ValidationError, match="without SNG_CODEC_KEY"):
        Settings(env="prod", _env_file=None, **strong)  # type: ignore[call-arg]
    assert Settings(env="prod", codec_key=new_key(), _env_file=None, **strong).codec_key  # type: ignore[call-arg]


def test_a_malformed_key_is_refused_everywhere() -> None:
    with pytest.raises(ValidationError, match="32 bytes"):
        Settings(codec_key="bm90IDMyIGJ5dGVz", _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="32 bytes"):
        Settings(codec_key="not base64 at all!", _env_file=None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("opened_as", "opens"),
    [
        ("sng-payout-reconciler-2026-12-07T02:30:30Z", True),  # the same schedule's next tick
        ("other-schedule-2026-12-07T02:30:30Z", False),  # another schedule's run
        ("sng-payout-reconciler", False),  # not a scheduled run
        ("tournament-abc", False),
    ],
)
async def test_runs_of_one_schedule_open_each_others_payloads_and_nothing_else(
    opened_as: str, opens: bool
) -> None:
    """Temporal hands a scheduled run the previous run's result, sealed for that run's id."""
    from temporalio.converter import WorkflowSerializationContext

    from core.codec import REFUSED_ENCODING

    secret = key()

    def bound(workflow_id: str) -> EncryptionCodec:
        return EncryptionCodec("k1", secret).with_context(
            WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)
        )

    sealed = await bound("sng-payout-reconciler-2026-12-07T02:30:00Z").encode([payload("r")])
    opened = await bound(opened_as).decode(sealed)
    assert (opened[0].metadata.get("encoding") != REFUSED_ENCODING.encode()) is opens
    # And a tournament's payload never opens under a scheduled run.
    sealed = await bound("tournament-abc").encode([payload("t")])
    opened = await bound("sng-payout-reconciler-2026-12-07T02:30:00Z").decode(sealed)
    assert opened[0].metadata.get("encoding") == REFUSED_ENCODING.encode()
