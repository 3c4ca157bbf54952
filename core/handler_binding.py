"""Updates bound to the handler they were sent to (security review N1).

The codec binds every payload to its workflow, but not to the Update it travels in: the SDK
gives a codec no handler name. So a victim's sealed ``register`` input, lifted from a
tournament's history, could be sent keyless as ``unregister`` (the same fields parse) and
unregister them.

Every client therefore adds a header to each Update, ``sng-handler-mac``: HMAC-SHA256, under a
key derived from the codec key, over the target workflow id, the Update's name and a digest of
its arguments as the payload converter writes them (canonical JSON). The workflow's validator
interceptor recomputes it and rejects an Update whose header does not verify (validators are
never replayed, so this needs no patch; the API and the workers upgrade together).

Signals are not clients' to send: the only ones are between our workflows (a table's
``hand_completed`` and ``table_finished``, a tournament's ``stop``), and each carries its own
signature over the signal's name and content (``wire.table_messages.report_mac``). (A header
on a workflow-to-workflow signal would not do: Temporal's time-skipping test server drops it.)

The header is not secret and needs no codec: without the key nobody can make one, and one
lifted with its payload verifies only for the same Update of the same workflow, where the
handlers' own rules (update ids, one entry per owner, cooldowns) answer. Keys rotate with the
codec key: a header verifies under the current key or a previous one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
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


def handler_mac(key: bytes, kind: str, workflow_id: str, name: str, digest: str) -> bytes:
    signed = json.dumps([kind, workflow_id, name, digest], separators=(",", ":")).encode()
    return hmac.new(key, signed, hashlib.sha256).hexdigest().encode()


class HandlerBinding(client.Interceptor, worker.Interceptor):
    """Adds the header to what a client sends, and checks it in the workflows a worker runs
    (a worker built from a client with this interceptor uses it too)."""

    def __init__(self, keys: Iterable[bytes], converter: PayloadConverter) -> None:
        self.keys = [binding_key(k) for k in keys]
        if not self.keys:
            raise ValueError("handler binding needs at least one codec key")
        self.converter = converter

    def header(self, kind: str, workflow_id: str, name: str, args: Sequence[Any]) -> Payload:
        mac = handler_mac(self.keys[0], kind, workflow_id, name, _digest(self.converter, args))
        return Payload(metadata={"encoding": b"binary/plain"}, data=mac)

    def verifies(
        self,
        headers: Mapping[str, Payload],
        kind: str,
        workflow_id: str,
        name: str,
        args: Sequence[Any],
        converter: PayloadConverter,
    ) -> bool:
        given = headers.get(HEADER)
        if given is None:
            return False
        try:
            digest = _digest(converter, args)
        except Exception:  # arguments this converter cannot write are nobody's we signed
            return False
        return any(
            hmac.compare_digest(given.data, handler_mac(key, kind, workflow_id, name, digest))
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
        header = self.binding.header("update", input.id, input.update, input.args)
        input.headers = {**input.headers, HEADER: header}
        return await super().start_workflow_update(input)


class _WorkflowInbound(worker.WorkflowInboundInterceptor):
    owner: HandlerBinding

    def _verifies(self, headers: Mapping[str, Payload], kind: str, name: str, args: Any) -> bool:
        return self.owner.verifies(
            headers, kind, workflow.info().workflow_id, name, args, workflow.payload_converter()
        )

    def handle_update_validator(self, input: worker.HandleUpdateInput) -> None:
        if not self._verifies(input.headers, "update", input.update, input.args):
            raise ApplicationError(
                f"refusing a {input.update!r} Update not bound to this handler",
                {"code": "unauthorized"},
                type="unauthorized",
                non_retryable=True,
            )
        super().handle_update_validator(input)
