"""Schemathesis against the live OpenAPI document: no 5xx, no response that breaks the schema.

Runs the `st` CLI (in a subprocess, so the API under test keeps serving in this event loop)
twice: as a player and as an operator, so both the players' and the operators' routes get
valid credentials while every input is generated from the schema.
"""

from __future__ import annotations

import asyncio
import shutil
import sysconfig
from pathlib import Path

import pytest

from api.auth import mint_player_token
from sng.settings import Settings

pytestmark = pytest.mark.slow


def st_binary() -> str:
    candidate = Path(sysconfig.get_path("scripts")) / "st"
    return str(candidate) if candidate.exists() else (shutil.which("st") or "st")


@pytest.mark.parametrize("who", ["player", "operator"])
async def test_no_server_errors_and_schema_conformance(
    api_url: str, settings: Settings, who: str
) -> None:
    header = (
        f"Authorization: Bearer {mint_player_token(settings, 'fuzz-player')}"
        if who == "player"
        else f"X-Service-Key: {settings.service_key}"
    )
    proc = await asyncio.create_subprocess_exec(
        st_binary(), "run", f"{api_url}/openapi.json",
        "--checks", "not_a_server_error,response_schema_conformance",
        "--max-examples", "15", "--seed", "1", "--request-timeout", "20",
        "--phases", "examples,coverage,fuzzing",
        # The codec endpoint decodes what it is sent: random payloads are its only input.
        "--exclude-path-regex", "^/codec",
        "-H", header,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 400)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-6000:]
