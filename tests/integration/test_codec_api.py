"""The codec endpoint over HTTP: the Temporal UI's remote codec protocol, CORS and operator auth."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from google.protobuf import json_format
from temporalio.client import Client

from core.settings import Settings
from devtools.devstack import free_port, start_temporal, wait_for_tcp
from tests.conftest import serve_api
from tests.integration.helpers import admin

ENCRYPTED = base64.b64encode(b"binary/encrypted").decode()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def plain_body(text: str) -> dict[str, object]:
    return {
        "payloads": [{"metadata": {"encoding": b64(b"json/plain")}, "data": b64(text.encode())}]
    }


async def test_encode_then_decode_round_trips_with_a_query_string(
    api_url: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post(
            "/codec/encode?namespace=default", json=plain_body('"hello"'), headers=admin(settings)
        )
        assert r.status_code == 200, r.text
        [sealed] = r.json()["payloads"]
        assert sealed["metadata"]["encoding"] == ENCRYPTED
        assert b"hello" not in base64.b64decode(sealed["data"])

        bearer = {"Authorization": f"Bearer {settings.key('codec')}"}
        r = await http.post(
            "/codec/decode?namespace=default&x=1", json={"payloads": [sealed]}, headers=bearer
        )
        assert r.status_code == 200, r.text
        assert r.json() == plain_body('"hello"')


async def test_decodes_what_the_workers_wrote(
    api_url: str, settings: Settings, client: Client
) -> None:
    [sealed] = await client.data_converter.encode(["seat 4: Ah Kd"])
    body = {"payloads": [json_format.MessageToDict(sealed)]}
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post("/codec/decode", json=body, headers=admin(settings))
    assert r.status_code == 200, r.text
    [opened] = r.json()["payloads"]
    assert base64.b64decode(opened["data"]) == b'"seat 4: Ah Kd"'


async def test_refuses_callers_without_the_service_key(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        for headers in ({}, {"X-Service-Key": "wrong"}, {"Authorization": "Bearer wrong"}):
            r = await http.post("/codec/decode", json=plain_body("1"), headers=headers)
            assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        r = await http.post("/codec/decode", content=b"not json", headers=admin(settings))
        assert r.status_code == 422


async def test_cors_preflight_answers_the_ui_origin_only(api_url: str, settings: Settings) -> None:
    ui = settings.temporal_ui_url
    ask = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-namespace,authorization",
    }
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.options("/codec/decode?namespace=default", headers={"Origin": ui, **ask})
        assert r.status_code == 204
        assert r.headers["access-control-allow-origin"] == ui
        allowed = r.headers["access-control-allow-headers"]
        assert {"content-type", "x-namespace", "authorization"} <= {
            h.strip() for h in allowed.split(",")
        }
        assert "POST" in r.headers["access-control-allow-methods"]

        foreign = await http.options(
            "/codec/decode", headers={"Origin": "http://evil.example", **ask}
        )
        assert "access-control-allow-origin" not in foreign.headers

        r = await http.post(
            "/codec/encode", json=plain_body("1"), headers={"Origin": ui, **admin(settings)}
        )
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == ui


@pytest.fixture
async def dev_api_url(settings: Settings) -> AsyncIterator[str]:
    """The API as `sng dev` runs it (env dev), without a worker: the codec needs none."""
    async with serve_api(settings.model_copy(update={"env": "dev"})) as url:
        yield url


async def test_dev_ui_reads_plaintext_without_credentials(
    dev_api_url: str, settings: Settings
) -> None:
    origin = f"http://localhost:{settings.temporal_ui_port}"  # the dev UI, either spelling
    async with httpx.AsyncClient(base_url=dev_api_url) as http:
        r = await http.post("/codec/encode", json=plain_body("7"), headers={"Origin": origin})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
        r = await http.post("/codec/decode?namespace=default", json=r.json())
        assert r.status_code == 200 and r.json() == plain_body("7")


def test_the_dev_server_ui_is_pointed_at_the_codec_and_forwards_no_credentials(
    tmp_path: Path,
) -> None:
    """Why dev leaves the codec open: the start-dev UI cannot send a token or cookies."""
    port, ui_port = free_port(), free_port()
    endpoint = "http://127.0.0.1:8000/codec"
    proc = start_temporal(
        tmp_path,
        port=port,
        ui_port=ui_port,
        namespace="default",
        log=tmp_path / "t.log",
        ui_codec=endpoint,
    )
    try:
        wait_for_tcp(ui_port, timeout=60, proc=proc)
        deadline = time.monotonic() + 30
        while True:
            try:
                codec = httpx.get(f"http://127.0.0.1:{ui_port}/api/v1/settings").json()["Codec"]
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert codec["Endpoint"] == endpoint
    assert codec["PassAccessToken"] is False and codec["IncludeCredentials"] is False
