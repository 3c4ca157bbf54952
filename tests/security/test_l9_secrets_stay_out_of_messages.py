"""L9 (security review): the RPC URL, provider key included, landed in failure messages.

A failed JSON-RPC call became a retryable ``ApplicationError`` whose message embedded the
HTTP client's error text, and that text names the URL, so a provider's API key in the URL's
path or query went into Temporal history (failure messages are not encrypted) and into
``payout_intents.failure_reason`` on the admin pages. Now URLs in those messages keep only
their scheme and host. (Secrets in settings are ``SecretStr``: test_m6_one_key_per_door.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.chain import ChainMoneyActivities
from devtools.devstack import free_port
from wire.messages import PrizePayment

SECRET = "sk-provider-3b1f9a0e77c24d1d"


@pytest.fixture
async def failing_rpc() -> AsyncIterator[str]:
    """An RPC endpoint that answers every call 503, as a provider in trouble does."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    port = free_port()
    server = await asyncio.start_server(serve, "127.0.0.1", port)
    yield f"http://user:{SECRET}@127.0.0.1:{port}/v3/{SECRET}?key={SECRET}"
    server.close()


async def test_a_failed_rpc_call_never_writes_the_url_into_history(failing_rpc: str) -> None:
    acts = ChainMoneyActivities(
        failing_rpc, "0x" + "11" * 32, "0x" + "22" * 20, "0x" + "33" * 20, request_timeout=5
    )
    payment = PrizePayment(
        intent_id="l9:payout:1",
        tournament_id="l9",
        position=1,
        player_id="p",
        amount=1,
        destination="0x" + "44" * 20,
    )
    try:
        with pytest.raises(ApplicationError) as info:
            await ActivityEnvironment().run(acts.pay_prize, payment)
    finally:
        await acts.aclose()
    assert info.value.type == "chain_unavailable" and not info.value.non_retryable
    assert "503" in info.value.message  # the reason is still there for the operator
    assert SECRET not in info.value.message, info.value.message
    assert SECRET not in str(info.value.details), info.value.details


def test_settings_never_show_the_database_password_or_the_rpc_url() -> None:
    from core.settings import Settings

    shown = repr(
        Settings(
            _env_file=None,  # type: ignore[call-arg]
            database_url=f"postgresql+asyncpg://sng:{SECRET}@db:5432/sng",
            chain_rpc_url=f"https://rpc.example/v3/{SECRET}",
        )
    )
    assert SECRET not in shown
