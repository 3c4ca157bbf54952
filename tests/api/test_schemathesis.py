"""Schemathesis against the live OpenAPI document: no 5xx, no response that breaks the schema.

Runs the `st` CLI (in a subprocess, so the API under test keeps serving in this event loop)
twice: as a player and as an operator, so both the players' and the operators' routes get
valid credentials while every input is generated from the schema.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sysconfig
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from db.migrate import upgrade_async
from tests.conftest import serve_api

pytestmark = pytest.mark.slow


def st_binary() -> str:
    candidate = Path(sysconfig.get_path("scripts")) / "st"
    return str(candidate) if candidate.exists() else (shutil.which("st") or "st")


@pytest.fixture
async def fuzz_api_url(settings: Settings, migrated_url: str, client: Client) -> AsyncIterator[str]:
    """The API and a worker over a database of their own: the lobby must not hand the fuzzer
    the ids of other tests' tournaments, whose workers (and task queues) are gone, and the
    tables the fuzzer opens publish their state where this API reads it."""
    from worker import build_worker

    name = f"fuzz_{uuid.uuid4().hex[:8]}"
    admin_dsn = migrated_url.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)[0]
    conn = await asyncpg.connect(f"{admin_dsn}/postgres")
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = migrated_url.rsplit("/", 1)[0] + f"/{name}"
    await upgrade_async(url)
    # Long-polls answer within half a second here: the fuzzer sends real room ids with
    # ``timeout`` up to 30 s, and each such call would otherwise hold the run that long.
    fuzzing = {"database_url": url, "long_poll_max_seconds": 0.5}
    db = Database(url)
    try:
        async with (
            build_worker(client, db, settings.temporal_task_queue),
            serve_api(settings.model_copy(update=fuzzing)) as api,
        ):
            yield api
    finally:
        await db.dispose()


@pytest.mark.parametrize("who", ["player", "operator"])
async def test_no_server_errors_and_schema_conformance(
    fuzz_api_url: str, settings: Settings, who: str
) -> None:
    api_url = fuzz_api_url
    header = (
        f"Authorization: Bearer {mint_player_token(settings, 'fuzz-player')}"
        if who == "player"
        else f"X-Service-Key: {settings.key('admin')}"
    )
    proc = await asyncio.create_subprocess_exec(
        st_binary(),
        "run",
        f"{api_url}/openapi.json",
        "--checks",
        "not_a_server_error,response_schema_conformance",
        # Six generated cases per operation and phase (57 operations): the coverage phase
        # adds each operation's boundary values on top. Ten cost CI ~40 s more for cases of
        # the same shapes (issue 31 added suites; CI stays under its 25 minutes).
        "--max-examples",
        "6",
        "--seed",
        "1",
        # Long-polls may hold a request up to their own 30 s limit when an id is real.
        "--request-timeout",
        "45",
        "--phases",
        "examples,coverage,fuzzing",
        # The codec endpoint decodes what it is sent: random payloads are its only input. The
        # event streams never end by design (tests/api/test_events.py and the room tests
        # cover them).
        "--exclude-path-regex",
        "^/codec|/events$|/stream$",
        "-H",
        header,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 400)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-6000:]


async def test_stateful_sequences_as_an_operator(fuzz_api_url: str, settings: Settings) -> None:
    """Schemathesis's stateful phase: call sequences chained through the links it infers from
    the schema (a created tournament's or room's id fed to the routes that take it), so the
    fuzzer reaches real resources instead of 404s (security review L1). A fixed number of seeded
    examples, not a time box: the same scenarios run however loaded the machine is (a 45 s box
    covered no link at all when CI ran two test processes on two cores)."""
    proc = await asyncio.create_subprocess_exec(
        st_binary(),
        "run",
        f"{fuzz_api_url}/openapi.json",
        "--checks",
        "not_a_server_error,response_schema_conformance",
        "--seed",
        "1",
        "--request-timeout",
        "45",
        "--phases",
        "stateful",
        "--max-examples",
        "100",
        "--exclude-path-regex",
        "^/codec|/events$|/stream$|/game-state$",
        "-H",
        f"X-Service-Key: {settings.key('admin')}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 300)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-6000:]
    scenarios = re.search(r"Scenarios:\s+(\d+)", text)
    links = re.search(r"API Links:\s+(\d+) covered", text)
    # It must have chained real calls, not found nothing to link.
    assert scenarios and int(scenarios.group(1)) > 0, text[-3000:]
    assert links and int(links.group(1)) > 0, text[-3000:]
