"""L12 (security review): the dev API answered any Host, and its codec was open on any bind.

A web page can point its own DNS name at 127.0.0.1 (DNS rebinding) and, from the victim's
browser, reach a ``sng dev`` API: its open codec endpoint and the public dev keys. And with
``SNG_API_HOST=0.0.0.0`` the dev codec was open to the network. Now the dev API on loopback
answers only requests addressed to localhost or 127.0.0.1, and its codec is open only then.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx

from core.settings import Settings
from tests.conftest import serve_api

PLAIN = {
    "payloads": [
        {
            "metadata": {"encoding": base64.b64encode(b"json/plain").decode()},
            "data": base64.b64encode(json.dumps("x").encode()).decode(),
        }
    ]
}


async def test_the_dev_api_answers_only_requests_addressed_to_this_machine(
    settings: Settings, tmp_path: Path
) -> None:
    dev = settings.model_copy(update={"env": "dev", "data_dir": tmp_path})
    async with serve_api(dev) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        assert (await http.get("/healthz")).status_code == 200
        assert (await http.post("/codec/encode", json=PLAIN)).status_code == 200  # dev: open
        port = url.rsplit(":", 1)[1]
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            r = await http.post("/codec/encode", json=PLAIN, headers={"host": host})
            assert r.status_code == 400 and r.json()["code"] == "validation_error", (host, r.text)
        r = await http.get("/healthz", headers={"host": f"localhost:{port}"})
        assert r.status_code == 200


async def test_a_dev_api_bound_beyond_loopback_keeps_its_codec_closed(
    settings: Settings, tmp_path: Path
) -> None:
    exposed = settings.model_copy(
        update={"env": "dev", "data_dir": tmp_path, "api_host": "0.0.0.0"}
    )
    async with serve_api(exposed) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        r = await http.post("/codec/encode", json=PLAIN)
        assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text
        key = {"X-Service-Key": exposed.key("codec")}
        assert (await http.post("/codec/encode", json=PLAIN, headers=key)).status_code == 200
