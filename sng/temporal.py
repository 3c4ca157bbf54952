"""The one way every process (API, worker, CLI, tests) builds its Temporal client."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.service import TLSConfig

from sng.settings import Settings


def data_converter() -> DataConverter:
    """Pydantic models in and out of every payload (one factory; the codec joins it here)."""
    return pydantic_data_converter


async def connect(settings: Settings) -> Client:
    tls: bool | TLSConfig = settings.temporal_tls
    if settings.temporal_tls_cert and settings.temporal_tls_key:
        tls = TLSConfig(
            client_cert=settings.temporal_tls_cert.read_bytes(),
            client_private_key=settings.temporal_tls_key.read_bytes(),
        )
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=data_converter(),
        tls=tls,
        api_key=settings.temporal_api_key,
    )
