"""N9 (security review 2026-12-03): smaller leftovers of M4, L1, M2/L7 and L12.

- Unknown ids on ``/tournaments/{id}/events`` and ``/events.json`` cost a Temporal
  ``DescribeWorkflowExecution`` each (M4). Now they are answered from the read model alone:
  an id with no tournament row is ``404 not_found``, whatever Temporal holds.
- An admin-page force-end or payout retry on a path id over 64 characters gave a 500 (L1).
  Now the path is a tournament id or a coded ``422``.
- A JWT ``sub`` of ``anon:<hash>`` was accepted and shared an anonymous observer's presence
  row (M2/L7). Now such a sub is refused like ``agent-``: that id space is the API's own.
- ``RefuseNul`` and ``LoopbackHostOnly`` let WebSocket upgrades through unchecked, and no
  upgrade's ``Origin`` was looked at (L12). Now both guards refuse an upgrade as they refuse a
  request, and a browser's cross-origin upgrade is refused (a missing ``Origin``, which
  non-browser clients send, is fine).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from tests.conftest import serve_api
from tests.integration.helpers import player
from tests.integration.test_rooms import open_room
from wire.ids import tournament_workflow_id
from wire.messages import CreateTournamentInput
from workflows.tournament import TournamentWorkflow

SETTINGS = {
    "seats": 3,
    "entryFee": 100,
    "startingStack": 1500,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 60},
    "actionTimeoutSeconds": 10,
}


async def test_events_of_an_id_the_read_model_does_not_know_cost_no_temporal_call(
    api_url: str, settings: Settings, client: Client
) -> None:
    # A tournament workflow that exists in Temporal but never wrote its row (no worker polls
    # its queue): the route used to find it with DescribeWorkflowExecution and answer 200.
    tid = uuid.uuid4().hex
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings=SETTINGS),
        id=tournament_workflow_id(tid),
        task_queue=f"nobody-{tid}",
    )
    try:
        async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
            for ident in (tid, uuid.uuid4().hex):
                r = await http.get(f"/tournaments/{ident}/events.json")
                assert r.status_code == 404 and r.json()["code"] == "not_found", r.text
                async with http.stream("GET", f"/tournaments/{ident}/events") as stream:
                    assert stream.status_code == 404
                    assert json.loads(await stream.aread())["code"] == "not_found"
            # A tournament created through the API is there for its events at once.
            created = await http.post(
                "/admin/tournaments",
                json={"name": "n9", "settings": SETTINGS},
                headers={"X-Service-Key": settings.key("admin")},
            )
            assert created.status_code == 201, created.text
            r = await http.get(f"/tournaments/{created.json()['tournamentId']}/events.json")
            assert r.status_code == 200, r.text
    finally:
        await handle.terminate()


async def _operator(http: httpx.AsyncClient, settings: Settings) -> str:
    """Log in to the admin pages; the form token of the session."""
    r = await http.post("/ui/login", data={"serviceKey": settings.key("admin")})
    assert r.status_code == 303, r.text
    page = (await http.get("/ui/tournaments")).text
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


async def test_admin_page_actions_on_an_overlong_id_are_a_coded_refusal(
    api_url: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        csrf = await _operator(http, settings)
        for ident in ("x" * 65, "a" * 200):
            for action in ("force-end", "retry-payouts"):
                r = await http.post(f"/ui/tournaments/{ident}/{action}", data={"csrf": csrf})
                assert r.status_code == 422, (action, r.status_code, r.text)
                assert r.json()["code"] == "validation_error", r.text
        # A real id still reaches the action (refused by the workflow's rule: not playing).
        r = await http.post(
            "/admin/tournaments",
            json={"name": "n9-ui", "settings": SETTINGS},
            headers={"X-Service-Key": settings.key("admin")},
        )
        tid = r.json()["tournamentId"]
        r = await http.post(f"/ui/tournaments/{tid}/force-end", data={"csrf": csrf})
        assert r.status_code == 303 and "error=" in r.headers["location"], r.headers


async def test_a_token_whose_sub_is_an_anonymous_observers_id_is_refused(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings)
        # What an anonymous observer from 127.0.0.1 is called in the room's presence rows.
        anon = "anon:" + hashlib.sha256(b"127.0.0.1").hexdigest()[:24]
        for sub in (anon, "anon:x", "anon:"):
            for path in ("/me/balance", f"/rooms/{room_id}/game-state?timeout=0"):
                r = await http.get(path, headers=player(settings, sub))
                assert r.status_code == 401, (sub, path, r.text)
                assert r.json()["code"] == "unauthorized"
        # Ids that merely contain it are players like any other.
        r = await http.get("/me/balance", headers=player(settings, "player-anon:1"))
        assert r.status_code == 200, r.text


async def _upgrade(url: str, path: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """A raw WebSocket upgrade request with exactly these headers: its status and body."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        b"GET " + path + b" HTTP/1.1",
        *(f"{k}: {v}".encode() for k, v in headers.items()),
        b"Upgrade: websocket",
        b"Connection: Upgrade",
        b"Sec-WebSocket-Version: 13",
        f"Sec-WebSocket-Key: {key}".encode(),
    ]
    writer.write(b"\r\n".join(lines) + b"\r\n\r\n")
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    status = int(head.split(b" ", 2)[1])
    body = b""
    length = re.search(rb"(?i)content-length: *(\d+)", head)
    if status != 101 and length:
        body = await asyncio.wait_for(reader.readexactly(int(length.group(1))), 10)
    writer.close()
    return status, body


def _code(body: bytes) -> str:
    code: str = json.loads(body)["code"]
    return code


async def test_websocket_upgrades_pass_the_same_guards_and_a_cross_origin_one_is_refused(
    settings: Settings, worker: Worker, tmp_path: Path
) -> None:
    dev = settings.model_copy(update={"env": "dev", "data_dir": tmp_path})
    async with serve_api(dev) as url:
        here = urlsplit(url).netloc
        path = b"/tournaments/abc/me/ws"
        # The guards' baseline: a plain upgrade to this machine is taken (the route itself
        # then closes it for want of a credential).
        status, _ = await _upgrade(url, path, {"Host": here})
        assert status == 101
        status, _ = await _upgrade(url, path, {"Host": here, "Origin": f"http://{here}"})
        assert status == 101
        # L12: addressed to another name (DNS rebinding), refused like an HTTP request.
        for host in ("evil.example", f"evil.example:{here.rsplit(':', 1)[1]}"):
            status, body = await _upgrade(url, path, {"Host": host})
            assert status == 400 and _code(body) == "validation_error", (host, status, body)
        # L1: a NUL in the path or the query, refused like an HTTP request.
        for bad in (b"/tournaments/a%00b/me/ws", b"/tournaments/abc/me/ws?after=%00"):
            status, body = await _upgrade(url, bad, {"Host": here})
            assert status == 422 and _code(body) == "validation_error", (bad, status, body)
        # A browser's upgrade from another origin (a page the victim visits), refused.
        for origin in ("http://evil.example", "null", f"https://{here}.evil.example"):
            headers = {"Host": here, "Origin": origin}
            status, body = await _upgrade(url, path, headers)
            assert status == 403 and _code(body) == "forbidden", (origin, status, body)
