"""M1 (security review): the production commands started with the public dev secrets.

``SNG_ENV`` defaulted to ``dev``, so ``sng api`` and ``sng worker`` started by anyone who
forgot to set it accepted the public dev JWT secret and service key (anyone could mint a
player token or call /admin). Now they refuse to start unless ``SNG_ENV`` is set: ``prod``
with real secrets, or ``dev``/``test`` on purpose.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", ["api", "worker"])
def test_a_production_command_without_sng_env_refuses_to_start(
    command: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNG_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sng.cli", command],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"sng {command} started with the dev secrets") from None
    assert done.returncode != 0
    assert "SNG_ENV is not set" in done.stderr, done.stderr[-2000:]
