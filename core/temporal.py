"""The one way every process (API, worker, CLI, tests) builds its Temporal client."""

from __future__ import annotations

import dataclasses

from opentelemetry.trace import Tracer
from temporalio.client import Client, Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from core.codec import EncryptionCodec, RefusedPayloadConverter, codec_for
from core.handler_binding import HandlerBinding
from core.settings import Settings, get_settings
from core.telemetry import configure_tracing


class PayloadConverter(PydanticPayloadConverter):
    """Pydantic's converter, plus one that reads the codec's refusals back as errors."""

    def __init__(self) -> None:
        super().__init__()
        self._set_converters(*self.converters.values(), RefusedPayloadConverter())


def data_converter(settings: Settings | None = None) -> DataConverter:
    """Pydantic models in and out of every payload, sealed by the deployment's AES-GCM codec.

    Without ``settings`` the process's own (environment) settings decide the key.
    """
    codec = codec_for(settings or get_settings())
    return dataclasses.replace(
        pydantic_data_converter, payload_converter_class=PayloadConverter, payload_codec=codec
    )


def interceptors(
    tracer: Tracer | None = None, settings: Settings | None = None
) -> list[Interceptor]:
    """Tracing on every client call, and on the workers built from that client; and every
    signal and Update bound to its handler (``core/handler_binding.py``).

    By default the tracing interceptor writes to the global tracer provider through a proxy,
    so it is a no-op until ``configure_tracing`` installs one; tests pass their own tracer.
    """
    return [TracingInterceptor(tracer), handler_binding(data_converter(settings))]


def handler_binding(converter: DataConverter) -> HandlerBinding:
    """The handler binding for this converter's codec keys (clients, workers and replayers
    must agree on it, as on the codec)."""
    codec = converter.payload_codec
    if not isinstance(codec, EncryptionCodec):
        raise ValueError("handler binding needs the deployment's codec")
    return HandlerBinding(codec.keys(), converter.payload_converter)


async def connect(settings: Settings, *, runtime: Runtime | None = None) -> Client:
    configure_tracing(settings)
    tls: bool | TLSConfig = settings.temporal_tls
    if settings.temporal_tls_cert and settings.temporal_tls_key:
        tls = TLSConfig(
            client_cert=settings.temporal_tls_cert.read_bytes(),
            client_private_key=settings.temporal_tls_key.read_bytes(),
        )
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=data_converter(settings),
        interceptors=interceptors(settings=settings),
        tls=tls,
        api_key=settings.temporal_api_key,
        runtime=runtime,
    )
