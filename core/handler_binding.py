"""Updates bound to the handler they were sent to (security review N1).

The codec binds every payload to its workflow, but not to the Update it travels in: the SDK
gives a codec no handler name. So a victim's sealed ``register`` input, lifted from a
tournament's history, could be sent keyless as ``unregister`` (the same fields parse) and
unregister them.

Every client therefore adds a header to each Update, ``sng-handler-mac``: HMAC-SHA256, under a
key derived from the codec key, over the target workflow id, the Update's name, its Update id,
when it was sent, and a digest of its arguments as the payload converter writes them
(canonical JSON). The workflow's validator interceptor recomputes it and rejects an Update
whose header does not verify, that comes under another Update id than the one signed, that
was sent more than ``WINDOW_MS`` from the worker's wall clock, or whose Update id the workflow
already took (``seen_updates``, kept for twice that window in the state the workflow carries
across continue-as-new). So a header and its sealed arguments copied out of history and sent
again (a victim's old ``leave``, mid-hand; an old ``register`` and ``pay_entry``) are
refused: under their own Update id Temporal (or the seen set, across runs) answers the first
outcome, and under any other the MAC fails. Validators are never replayed, so this needs no
patch; the API and the workers upgrade together.

Signals are not clients' to send: the only ones are between our workflows (a table's
``hand_completed`` and ``table_finished``, a tournament's ``stop``), and each carries its own
signature over the signal's name and content (``wire.table_messages.report_mac``). (A header
on a workflow-to-workflow signal would not do: Temporal's time-skipping test server drops it.)

The header is not secret and needs no codec: without the key nobody can make one. Keys rotate
with the codec key: a header verifies under the current key or a previous one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from temporalio import client, worker, workflow
from temporalio.api.common.v1 import Payload
from temporalio.common import RawValue
from temporalio.converter import PayloadConverter
from temporalio.exceptions import ApplicationError

HEADER = "sng-handler-mac"
_INFO = b"sng handler binding v1"
WINDOW_MS = 120_000
"""How far an Update's sending time may be from the workflow's clock (either way)."""


def binding_key(codec_key: bytes) -> bytes:
    """The MAC key for one codec key (never the codec key itself)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(codec_key)


def _digest(converter: PayloadConverter, args: Sequence[Any]) -> str:
    """The arguments as the converter writes them, in canonical JSON (a dynamic handler's raw
    values, which the SDK hands over as ``[name, [RawValue, ...]]``, are the payloads as they
    came)."""
    if (
        len(args) == 2
        and isinstance(args[0], str)
        and isinstance(args[1], list)
        and all(isinstance(a, RawValue) for a in args[1])
    ):
        args = args[1]
    payloads = [
        a.payload if isinstance(a, RawValue) else a
        for a in args
        if isinstance(a, RawValue | Payload)
    ]
    if len(payloads) != len(args):
        payloads = list(converter.to_payloads(args))
    parts = []
    for payload in payloads:
        try:
            parts.append(json.dumps(json.loads(payload.data), sort_keys=True))
        except ValueError:
            parts.append(payload.data.hex())
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def handler_mac(
    key: bytes, kind: str, workflow_id: str, name: str, update_id: str, sent_ms: int, digest: str
) -> str:
    signed = json.dumps(
        [kind, workflow_id, name, update_id, sent_ms, digest], separators=(",", ":")
    ).encode()
    return hmac.new(key, signed, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Signed:
    """What a header says: the Update id and sending time it was signed for, and the MAC."""

    update_id: str
    sent_ms: int
    mac: str

    @staticmethod
    def read(headers: Mapping[str, Payload]) -> Signed | None:
        given = headers.get(HEADER)
        if given is None:
            return None
        try:
            raw = json.loads(given.data)
            return Signed(str(raw["id"]), int(raw["at"]), str(raw["mac"]))
        except (ValueError, KeyError, TypeError):
            return None


class HandlerBinding(client.Interceptor, worker.Interceptor):
    """Adds the header to what a client sends, and checks it in the workflows a worker runs
    (a worker built from a client with this interceptor uses it too)."""

    def __init__(self, keys: Iterable[bytes], converter: PayloadConverter) -> None:
        self.keys = [binding_key(k) for k in keys]
        if not self.keys:
            raise ValueError("handler binding needs at least one codec key")
        self.converter = converter

    def header(
        self, workflow_id: str, name: str, update_id: str, sent_ms: int, args: Sequence[Any]
    ) -> Payload:
        digest = _digest(self.converter, args)
        mac = handler_mac(self.keys[0], "update", workflow_id, name, update_id, sent_ms, digest)
        body = json.dumps({"id": update_id, "at": sent_ms, "mac": mac}, separators=(",", ":"))
        return Payload(metadata={"encoding": b"json/plain"}, data=body.encode())

    def verifies(
        self,
        signed: Signed,
        workflow_id: str,
        name: str,
        args: Sequence[Any],
        converter: PayloadConverter,
    ) -> bool:
        try:
            digest = _digest(converter, args)
        except Exception:  # arguments this converter cannot write are nobody's we signed
            return False
        return any(
            hmac.compare_digest(
                signed.mac,
                handler_mac(
                    key, "update", workflow_id, name, signed.update_id, signed.sent_ms, digest
                ),
            )
            for key in self.keys
        )

    def intercept_client(self, next: client.OutboundInterceptor) -> client.OutboundInterceptor:
        return _ClientOutbound(next, self)

    def workflow_interceptor_class(
        self, input: worker.WorkflowInterceptorClassInput
    ) -> type[worker.WorkflowInboundInterceptor]:
        binding = self

        class Inbound(_WorkflowInbound):
            owner = binding

        return Inbound


class _ClientOutbound(client.OutboundInterceptor):
    def __init__(self, next: client.OutboundInterceptor, binding: HandlerBinding) -> None:
        super().__init__(next)
        self.binding = binding

    async def start_workflow_update(
        self, input: client.StartWorkflowUpdateInput
    ) -> client.WorkflowUpdateHandle[Any]:
        # The id is signed, so it is chosen here when the caller chose none.
        input.update_id = input.update_id or str(uuid.uuid4())
        header = self.binding.header(
            input.id, input.update, input.update_id, int(time.time() * 1000), input.args
        )
        input.headers = {**input.headers, HEADER: header}
        return await super().start_workflow_update(input)


class _WorkflowInbound(worker.WorkflowInboundInterceptor):
    owner: HandlerBinding
    _own_seen: dict[str, int] | None = None

    def _seen(self) -> dict[str, int]:
        """The Update ids this workflow took lately: in the state it carries across
        continue-as-new when it keeps them there (``seen_updates``), else this run's."""
        carried = getattr(workflow.instance(), "seen_updates", None)
        if isinstance(carried, dict):
            return carried
        if self._own_seen is None:
            self._own_seen = {}
        return self._own_seen

    def handle_update_validator(self, input: worker.HandleUpdateInput) -> None:
        signed = Signed.read(input.headers)
        # The wall clock, not the workflow's: a validator never replays, so it may read it,
        # and a time-skipping test server runs the workflow's clock far ahead of the sender's.
        with workflow.unsafe.sandbox_unrestricted():
            now_ms = int(time.time() * 1000)
        why = None
        if signed is None or signed.update_id != input.id:
            why = "not signed for this Update"
        elif not self.owner.verifies(
            signed,
            workflow.info().workflow_id,
            input.update,
            input.args,
            workflow.payload_converter(),
        ):
            why = "not bound to this handler"
        elif input.id in self._seen():
            why = "already taken (an Update id is used once)"
        elif abs(now_ms - signed.sent_ms) > WINDOW_MS:
            why = "sent too long ago (or from a clock far off)"
        if why is not None:
            raise ApplicationError(
                f"refusing a {input.update!r} Update {why}",
                {"field": None},
                type="unauthorized",
                non_retryable=True,
            )
        super().handle_update_validator(input)

    async def handle_update_handler(self, input: worker.HandleUpdateInput) -> Any:
        # Runs on replay too, so the seen set is rebuilt from history; it only records.
        signed = Signed.read(input.headers)
        if signed is not None and signed.update_id == input.id:
            seen = self._seen()
            seen[input.id] = signed.sent_ms
            horizon = int(workflow.now().timestamp() * 1000) - 2 * WINDOW_MS
            for update_id in [u for u, at in seen.items() if at < horizon]:
                del seen[update_id]
        return await super().handle_update_handler(input)
