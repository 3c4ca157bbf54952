"""The compose file's shape, really run (issue 31, "Beyond one machine"): Docker cannot run
here, so these tests start what its services start. ``deploy/nginx.conf``, the very file the
compose ``proxy`` mounts, runs in Debian's nginx in front of two ``sng api`` processes, with
two ``sng worker`` processes behind them, against the session's Temporal and PostgreSQL.

- Bots written with the SDK play a multi-table tournament (two tables of three, then the
  final table) to ``closed`` through the proxy; requests reach both replicas; a player's SSE
  stream and WebSocket pass through it unbuffered.
- A client cannot name its own address: the proxy replaces ``X-Forwarded-For``, so the
  per-address limit holds however the client spells the header. The same requests through a
  proxy that appends the header (``proxy_add_x_forwarded_for``, a common default) get past
  the limit: the test can tell the two apart.

nginx comes from Debian (``./bin/check`` installs it with chromium when the machine allows);
locally a missing nginx skips, in CI (``CI`` set) it fails."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client
from websockets.asyncio.client import connect

from core.settings import Settings
from devtools.devstack import free_port, wait_for_tcp
from sdk.bots import run_bot, tight_aggressive
from sdk.client import SngClient
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, credit
from tests.integration.processes import Processes, running
from tests.integration.test_player_streams import _sse
from tests.integration.test_tournament import until_state
from tests.replay import histories_from, replay_histories
from wire.ids import tournament_workflow_id

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

if not Path(NGINX).exists() and not os.environ.get("CI"):
    pytest.skip(
        "nginx is missing: apt-get install -y nginx (CI installs it and never skips)",
        allow_module_level=True,
    )


def render(root: Path, port: int, upstreams: list[str], *, appended: bool = False) -> Path:
    """deploy/nginx.conf with this machine's addresses in place of the compose network's, and
    its scratch files under ``root`` (nginx runs unprivileged here)."""
    conf = CONF.read_text()
    servers = "".join(f"server {u};\n        " for u in upstreams)
    conf, found = re.subn(r"server api:8000;\n\s*", servers, conf)
    assert found == 1, "the upstream line moved: update this test"
    conf, found = re.subn(r"listen 8000\b", f"listen 127.0.0.1:{port}", conf)
    assert found == 2  # the dropping default server and ours
    scratch = "".join(
        f"    {kind}_temp_path {root / kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = conf.replace("http {\n", "http {\n" + scratch, 1)
    if appended:
        conf = conf.replace("$remote_addr;", "$proxy_add_x_forwarded_for;")
    path = root / "nginx.conf"
    path.write_text(conf)
    return path


@contextlib.contextmanager
def nginx(root: Path, upstreams: list[str], *, appended: bool = False) -> Iterator[str]:
    port = free_port()
    root.mkdir(parents=True, exist_ok=True)
    conf = render(root, port, upstreams, appended=appended)
    directives = f"daemon off; pid {root / 'nginx.pid'}; error_log {root / 'error.log'};"
    with open(root / "nginx.out", "wb") as out:
        proc = subprocess.Popen(
            [NGINX, "-p", str(root), "-c", str(conf), "-g", directives], stdout=out, stderr=out
        )
    try:
        wait_for_tcp(port, timeout=20, proc=proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _host_port(url: str) -> str:
    return url.removeprefix("http://")


async def _composed(url: str) -> float:
    """How many game states the replica at ``url`` composed (its own /metrics)."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        text = (await http.get("/metrics")).text
    found = re.search(r"^sng_api_game_states_composed_total ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


ENTRANTS = 6
"""The proxy's tournament: a multi-table one, two tables of three (issue 31, "Beyond one
machine": an MTT across two APIs and two workers), whose players are moved to the final
table."""


async def create_mtt(http: httpx.AsyncClient, settings: Settings) -> str:
    body = {
        "name": "proxy MTT",
        "handPauseMs": 0,
        "settings": {
            "seats": 3,
            "maxEntrants": ENTRANTS,
            "entryFee": 100,
            "startingStack": 300,
            "actionTimeoutSeconds": 30,
            "blindStructure": {
                "startingSmallBlind": 10,
                "increaseFactor": 1.5,
                "levelDurationSeconds": 600,
            },
        },
    }
    r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
    assert r.status_code == 201, r.text
    return str(r.json()["tournamentId"])


async def test_an_mtt_plays_through_the_proxy_on_two_apis_and_two_workers(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    with running(settings, tmp_path) as procs:
        procs.worker()
        procs.worker()
        apis = [procs.api()[1] for _ in range(2)]
        before = [await _composed(url) for url in apis]
        with nginx(tmp_path / "nginx", [_host_port(u) for u in apis]) as url:
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                tid = await create_mtt(http, settings)
                owners = [f"px-{uuid.uuid4().hex[:6]}" for _ in range(ENTRANTS)]
                for owner in owners:
                    await credit(http, settings, owner, 100)
                made = [await new_agent(http, settings, owner) for owner in owners]
                bots = [SngClient(url, agent_key=a["key"]) for a in made]
                try:
                    for bot in bots:
                        await bot.register(tid)
                        await bot.pay(tid, 100)
                    await until_state(http, tid, "playing")
                    headers = agent_headers(made[0]["key"])
                    # A stream through the proxy: its first game state arrives while the
                    # stream stays open (a buffering proxy would hold it).
                    messages = await asyncio.wait_for(
                        _sse(
                            http,
                            f"/tournaments/{tid}/me/stream",
                            headers,
                            count=50,
                            until="game_state",
                        ),
                        30,
                    )
                    assert messages[-1][1] == "game_state", messages
                    # A WebSocket through the proxy: the handshake's Upgrade passes.
                    ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
                    async with connect(ws_url, additional_headers=headers) as ws:
                        async with asyncio.timeout(30):
                            while True:
                                kind = json.loads(await ws.recv()).get("event")
                                if kind == "game_state":
                                    break
                    await asyncio.wait_for(
                        asyncio.gather(
                            *(
                                run_bot(bot, tid, tight_aggressive, seed=i)
                                for i, bot in enumerate(bots)
                            )
                        ),
                        timeout=300,
                    )
                finally:
                    for bot in bots:
                        await bot.aclose()
                final = await until_state(http, tid, "closed", limit=90)
                r = await http.get(f"/tournaments/{tid}/events.json", params={"limit": 500})
                logged = [e["type"] for e in r.json()["events"]]
        after = [await _composed(u) for u in apis]
    assert sorted(f["playerId"] for f in final["standings"]) == sorted(a["agentId"] for a in made)
    # Entry 100, no rake; every payout paid once.
    assert sum(p["amount"] for p in final["payouts"]) == 100 * ENTRANTS, final
    assert all(p["status"] == "confirmed" for p in final["payouts"]), final
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)
    # Two tables became one: a table broke and its players were moved, once each in the log.
    assert logged.count("final_table") == 1 and "table_broken" in logged, logged
    assert "player_moved" in logged, logged
    # Every run: the tournament's and, through its children, each table's.
    histories = await histories_from(client, [tournament_workflow_id(tid)])
    assert sum("table" in h.workflow_id for h in histories) >= 2, [h.workflow_id for h in histories]
    (await replay_histories(client, histories)).raise_on_failure()


async def _limited(url: str, tid: str) -> int:
    """How many of 30 reads, each naming a different X-Forwarded-For, were refused 429."""
    refused = 0
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for i in range(30):
            r = await http.get(f"/tournaments/{tid}", headers={"X-Forwarded-For": f"10.9.0.{i}"})
            assert r.status_code in (200, 404, 429), r.text
            refused += r.status_code == 429
    return refused


@pytest.fixture
def limited_apis(settings: Settings, tmp_path: Path) -> Iterator[tuple[Processes, list[str]]]:
    with running(settings, tmp_path) as procs:
        yield procs, [procs.api(rate_limit_ip="5/minute")[1] for _ in range(2)]


async def test_a_client_cannot_name_its_own_address_through_the_proxy(
    limited_apis: tuple[Processes, list[str]], tmp_path: Path
) -> None:
    _, apis = limited_apis
    upstreams = [_host_port(u) for u in apis]
    tid = f"nobody-{uuid.uuid4().hex[:6]}"
    with nginx(tmp_path / "appending", upstreams, appended=True) as naive:
        # The attack, against a proxy that appends: each request a new address, none refused.
        assert await _limited(naive, tid) == 0
    # Those requests counted against the addresses they named, not this client's: its own
    # window is still empty for the next proxy.
    with nginx(tmp_path / "ours", upstreams) as ours:
        # deploy/nginx.conf: every request is the one client it is. Two replicas each allow
        # 5 a minute, so at most 10 of the 30 pass.
        assert await _limited(ours, tid) >= 20
        # Security review 3, S5: a page that points its own name at the proxy gets nothing
        # (444: the connection closes unanswered); the proxy's own names are served.
        async with httpx.AsyncClient(base_url=ours, timeout=10) as http:
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get("/healthz", headers={"Host": "wallet-login.evil.example"})
            assert (await http.get("/healthz")).status_code == 200
