"""N3 (second security review): the limits counted the first credential-looking header.

The rate limit's per-credential window and the stream caps keyed a client by the raw bytes of
the first ``Authorization``, ``X-Agent-Key`` or ``X-Service-Key`` header, checked or not. A
junk ``X-Service-Key`` beside a real token, a re-spelled ``Authorization`` (``bearer``, more
spaces) or an agent key sent the other way each got a fresh bucket: 60 of 60 requests passed a
limit of 20, and one anonymous address filled the replica's whole stream total, after which a
player's own ``me/stream`` was ``429 too_many_streams``.

Now a request counts against its address always, and against its identity only once that
identity is verified (the player, the agent, the operator door), however the credential was
spelled; streams are capped per identity (or, anonymous, per address), per address, and one
address holds at most half of the replica's total.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import uuid

import httpx
from temporalio.worker import Worker
from websockets.asyncio.client import connect

from core.settings import Settings
from db import agents
from db.engine import Database
from tests.conftest import serve_api
from tests.integration.helpers import create, player


def _spellings(token: str) -> list[str]:
    """``Bearer <token>`` as a client may spell it and the API accepts it: any case of the
    scheme, any number of spaces before the token."""
    cases = ["".join(c) for c in itertools.product(*((ch.lower(), ch.upper()) for ch in "bearer"))]
    return [f"{scheme}{' ' * (1 + i % 3)}{token}" for i, scheme in enumerate(cases)]


async def test_the_credential_limit_counts_who_was_verified_however_it_is_spelled(
    settings: Settings, worker: Worker, db: Database
) -> None:
    limited = settings.model_copy(
        update={"rate_limit_ip": "1000/minute", "rate_limit_credential": "20/minute"}
    )
    async with serve_api(limited) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        # The review's attack: a junk X-Service-Key in front of a real token, a new one each
        # time. Only the token is checked (player routes ignore X-Service-Key).
        token = player(limited, f"n3-junk-{uuid.uuid4().hex[:6]}")["Authorization"]
        junk = [
            await http.get(
                "/me/balance", headers={"X-Service-Key": uuid.uuid4().hex, "Authorization": token}
            )
            for _ in range(60)
        ]
        statuses = [r.status_code for r in junk]
        assert statuses.count(200) == 20 and statuses.count(429) == 40, statuses
        assert junk[-1].json()["code"] == "rate_limited"
        assert 1 <= int(junk[-1].headers["retry-after"]) <= 60

        # One token spelled 60 ways ("bearer", "BEARER ", two spaces, ...): one player.
        raw = player(limited, f"n3-spelled-{uuid.uuid4().hex[:6]}")["Authorization"].split()[1]
        spelled = [
            (await http.get("/me/balance", headers={"Authorization": value})).status_code
            for value in _spellings(raw)[:60]
        ]
        assert spelled.count(200) == 20 and spelled.count(429) == 40, spelled

        # An agent key sent both ways is one agent.
        new = await agents.create_agent(
            db, owner_user_id="n3-owner", name="n3", skills=["poker:sng"]
        )
        both = [{"X-Agent-Key": new.key}, {"Authorization": f"Bearer {new.key}"}]
        answers = [
            (await http.get("/me/balance", headers=both[i % 2])).status_code for i in range(60)
        ]
        assert answers.count(200) == 20 and answers.count(429) == 40, answers

        # Another verified player still has its own window.
        other = player(limited, f"n3-other-{uuid.uuid4().hex[:6]}")
        assert (await http.get("/me/balance", headers=other)).status_code == 200


async def test_unverified_headers_share_the_address_window(
    settings: Settings, worker: Worker
) -> None:
    limited = settings.model_copy(
        update={"rate_limit_ip": "30/minute", "rate_limit_credential": "1000/minute"}
    )
    async with serve_api(limited) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        statuses = [
            (
                await http.get(
                    "/tournaments",
                    headers={"X-Service-Key": uuid.uuid4().hex, "X-Agent-Key": uuid.uuid4().hex},
                )
            ).status_code
            for _ in range(60)
        ]
        # Neither header is checked on a public list, so neither is a client of its own.
        assert statuses.count(200) == 30 and statuses.count(429) == 30, statuses
        # A junk token is refused (401) and is no new client either: the address is spent.
        refused = await http.get("/me/balance", headers={"Authorization": "Bearer junk"})
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"


async def test_junk_headers_cannot_fill_the_streams_a_player_needs(
    settings: Settings, worker: Worker
) -> None:
    capped = settings.model_copy(update={"max_streams": 12, "max_streams_per_client": 4})
    async with (
        serve_api(capped) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
        contextlib.AsyncExitStack() as held,
    ):
        tid = await create(http, capped)
        path = f"/tournaments/{tid}/events"

        async def open_stream(route: str, headers: dict[str, str] | None = None) -> httpx.Response:
            return await held.enter_async_context(http.stream("GET", route, headers=headers))

        anonymous = [(await open_stream(path)).status_code for _ in range(6)]
        assert anonymous == [200] * 4 + [429] * 2, anonymous
        # The review's attack: a junk X-Service-Key on each. Nobody checks it on a public
        # stream, so it is the same anonymous client of the same address.
        junk = [await open_stream(path, {"X-Service-Key": uuid.uuid4().hex}) for _ in range(12)]
        assert [r.status_code for r in junk] == [429] * 12, [r.status_code for r in junk]
        assert json.loads(await junk[-1].aread())["code"] == "too_many_streams"

        # A real player, on the same address, still gets its own stream...
        mine = await open_stream(f"/tournaments/{tid}/me/stream", player(capped, "n3-legit"))
        assert mine.status_code == 200, await mine.aread()
        # ... and its socket: served (a request is answered), not closed with 4429.
        ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
        ws = await held.enter_async_context(
            connect(ws_url, additional_headers=player(capped, "n3-legit-ws"))
        )
        await ws.send(json.dumps({"type": "nonsense", "requestId": "r1"}))
        while (reply := json.loads(await ws.recv())).get("requestId") != "r1":
            pass
        assert reply["data"]["code"] == "validation_error", reply

        # One address holds at most half of the replica's total (6 of 12: the 4 anonymous
        # streams and the two above), however many identities it brings...
        more = await open_stream(f"/tournaments/{tid}/me/stream", player(capped, "n3-third"))
        assert more.status_code == 429, more.status_code
        assert "from one address" in json.loads(await more.aread())["message"]
        # ... and the rest is for everyone else (another client of the test server's trusted
        # loopback proxy, docs/operations.md).
        elsewhere = await open_stream(path, {"X-Forwarded-For": "198.51.100.7"})
        assert elsewhere.status_code == 200
