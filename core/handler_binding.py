"""Signals and Updates bound to the handler they were sent to (security review N1).

The codec binds every payload to its workflow, but not to the signal or Update it travels
in: the SDK gives a codec no handler name. So a sealed input lifted from a workflow's own
history could be sent again under *another* handler's name, and a signal with no arguments
(a table's ``stop``) carried no payload for the codec to refuse at all.

Every client and every workflow that sends a signal or an Update therefore adds a header,
``sng-handler-mac``: HMAC-SHA256, under a key derived from the codec key, over the kind
(signal or Update), the target workflow id, the handler name and a digest of the arguments as
the payload converter writes them (canonical JSON). The receiving workflow recomputes it:

- an Update whose header does not verify is rejected by its validator (validators are never
  replayed, so this needs no patch; the API and the workers upgrade together);
- a signal whose header does not verify is dropped. A signal with no header at all is still
  taken by runs from before the ``handler-mac-v1`` patch, so their histories replay.

The header itself is not secret and needs no codec: without the key nobody can make one, and
one lifted with its payload verifies only for the same handler of the same workflow, where
the handlers' own rules (update ids, reports taken once in order, one entry per owner) answer.
Keys rotate with the codec key: a header verifies under the current key or a previous one.
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
PATCH = "handler-mac-v1"
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

    async def signal_workflow(self, input: client.SignalWorkflowInput) -> None:
        header = self.binding.header("signal", input.id, input.signal, input.args)
        input.headers = {**input.headers, HEADER: header}
        await super().signal_workflow(input)

    async def start_workflow_update(
        self, input: client.StartWorkflowUpdateInput
    ) -> client.WorkflowUpdateHandle[Any]:
        header = self.binding.header("update", input.id, input.update, input.args)
        input.headers = {**input.headers, HEADER: header}
        return await super().start_workflow_update(input)


class _WorkflowInbound(worker.WorkflowInboundInterceptor):
    owner: HandlerBinding

    def init(self, outbound: worker.WorkflowOutboundInterceptor) -> None:
        super().init(_WorkflowOutbound(outbound, self.owner))

    def _verifies(self, headers: Mapping[str, Payload], kind: str, name: str, args: Any) -> bool:
        return self.owner.verifies(
            headers, kind, workflow.info().workflow_id, name, args, workflow.payload_converter()
        )

    async def handle_signal(self, input: worker.HandleSignalInput) -> None:
        if self._verifies(input.headers, "signal", input.signal, input.args):
            await super().handle_signal(input)
        elif HEADER not in input.headers and not workflow.patched(PATCH):
            await super().handle_signal(input)  # a run from before the binding
        else:
            workflow.logger.warning("dropped a %r signal not bound to it", input.signal)

    def handle_update_validator(self, input: worker.HandleUpdateInput) -> None:
        if not self._verifies(input.headers, "update", input.update, input.args):
            raise ApplicationError(
                f"refusing a {input.update!r} Update not bound to this handler",
                {"code": "unauthorized"},
                type="unauthorized",
                non_retryable=True,
            )
        super().handle_update_validator(input)


class _WorkflowOutbound(worker.WorkflowOutboundInterceptor):
    def __init__(self, next: worker.WorkflowOutboundInterceptor, binding: HandlerBinding) -> None:
        super().__init__(next)
        self.binding = binding

    async def signal_external_workflow(self, input: worker.SignalExternalWorkflowInput) -> None:
        header = self._header(input.workflow_id, input.signal, input.args)
        input.headers = {**input.headers, HEADER: header}
        await super().signal_external_workflow(input)

    async def signal_child_workflow(self, input: worker.SignalChildWorkflowInput) -> None:
        header = self._header(input.child_workflow_id, input.signal, input.args)
        input.headers = {**input.headers, HEADER: header}
        await super().signal_child_workflow(input)

    def _header(self, workflow_id: str, name: str, args: Sequence[Any]) -> Payload:
        mac = handler_mac(
            self.binding.keys[0],
            "signal",
            workflow_id,
            name,
            _digest(workflow.payload_converter(), args),
        )
        return Payload(metadata={"encoding": b"binary/plain"}, data=mac)
