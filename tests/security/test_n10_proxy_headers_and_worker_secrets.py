"""N10 (second security review, deployment): proxies, and secrets only where they are used.

- ``sng api`` ran uvicorn with its default proxy trust and no way to change it. Behind a
  proxy anywhere but on 127.0.0.1 every client had the proxy's address: one client could spend
  the per-address rate for everyone, and all anonymous clients shared one stream cap. Now
  ``--proxy-headers``/``--forwarded-allow-ips`` (``SNG_PROXY_HEADERS``,
  ``SNG_FORWARDED_ALLOW_IPS``) name the proxy: behind it each client has its own address,
  and ``X-Forwarded-For`` from anyone else is ignored.
- docker-compose gave the workers every operator key and the JWT secret (a compromised worker
  could mint player tokens and call /admin), and a prod worker could not even start without
  them. Now only the API holds them and refuses to start without them; a prod worker starts
  with none (tests/test_compose.py checks the split in the file).
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
import yaml
from temporalio.worker import Worker

from core import deck_vault
from core.settings import Settings
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def sng_api(settings: Settings) -> AsyncIterator[str]:
    """The API served the way ``sng api`` serves it (``sng.cli.api_config``)."""
    from sng.cli import api_config

    config = api_config(settings.model_copy(update={"api_port": free_port()}))
    config.log_level = "warning"
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://{settings.api_host}:{config.port}"
    finally:
        server.should_exit = True
        await task


async def statuses(http: httpx.AsyncClient, client_addresses: list[str]) -> list[int]:
    return [
        (await http.get("/tournaments", headers={"X-Forwarded-For": address})).status_code
        for address in client_addresses
    ]


async def test_behind_a_named_proxy_each_client_has_its_own_address(
    settings: Settings, worker: Worker
) -> None:
    # This test's client is the proxy (127.0.0.1), and names its clients in X-Forwarded-For.
    behind = settings.model_copy(
        update={"rate_limit_ip": "5/minute", "forwarded_allow_ips": "127.0.0.1"}
    )
    async with sng_api(behind) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        assert await statuses(http, ["203.0.113.1"] * 7) == [200] * 5 + [429] * 2
        # Another client behind the same proxy is not refused for the first one's requests.
        assert await statuses(http, ["203.0.113.2"] * 2) == [200, 200]


@pytest.mark.parametrize(
    "proxy",
    [
        {"forwarded_allow_ips": "192.0.2.10"},  # the proxy is elsewhere: we are not it
        {"forwarded_allow_ips": "127.0.0.1", "proxy_headers": False},  # proxy headers off
    ],
    ids=["another-proxy", "off"],
)
async def test_proxy_headers_from_anyone_else_are_ignored(
    settings: Settings, worker: Worker, proxy: dict[str, object]
) -> None:
    direct = settings.model_copy(update={"rate_limit_ip": "5/minute", **proxy})
    async with sng_api(direct) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        # A client that names a new address in each request is still one address.
        made_up = [f"198.51.100.{n}" for n in range(1, 8)]
        assert await statuses(http, made_up) == [200] * 5 + [429] * 2


def test_sng_api_takes_the_proxy_settings() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "sng.cli", "api", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--proxy-headers" in done.stdout and "--forwarded-allow-ips" in done.stdout


def _compose_env(service: str) -> dict[str, str]:
    """A service's environment in docker-compose.yml, each required ``${VAR:?…}`` given a
    strong value of its own, as an operator would."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    raw = {str(k): str(v) for k, v in compose["services"][service]["environment"].items()}
    values = {
        "SNG_CODEC_KEY": base64.b64encode(b"c" * 32).decode(),
        "SNG_DECK_KEY": base64.b64encode(b"d" * 32).decode(),
        "SNG_PUBLIC_URL": "https://poker.example",  # not a secret: the service's own URL
    }

    def given(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(3)
        if match.group(2) == ":-":
            return default
        return values.get(name, f"{name.lower()}-strong-value-0123456789")

    return {k: re.sub(r"\$\{(\w+)(:\?|:-)?([^}]*)\}", given, v) for k, v in raw.items()}


def test_a_prod_worker_starts_with_no_operator_key_and_no_jwt_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("SNG_") or name == "DATABASE_URL":
            monkeypatch.delenv(name)
    env = _compose_env("worker")
    for secret in (
        "SNG_ADMIN_KEY",
        "SNG_INTERNAL_KEY",
        "SNG_CODEC_ENDPOINT_KEY",
        "SNG_SERVICE_KEY",
        "SNG_JWT_SECRET",
    ):
        assert secret not in env, secret
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.env == "prod"
    # What `sng worker` checks before it connects: its deck key (core/deck_vault.py).
    assert deck_vault.DeckVault.from_settings(settings) is not None

    # The same environment cannot serve the API: it refuses to start without its secrets.
    from api.app import create_app

    with pytest.raises(SystemExit, match=r"SNG_ADMIN_KEY.*SNG_JWT_SECRET"):
        create_app(settings)


def test_the_api_starts_with_its_own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("SNG_") or name == "DATABASE_URL":
            monkeypatch.delenv(name)
    for name, value in _compose_env("api").items():
        monkeypatch.setenv(name, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    from api.app import create_app

    assert create_app(settings) is not None
    assert "SNG_DECK_KEY" not in _compose_env("api")  # the deck key is the workers' alone
