"""The committed ABI and bytecode are exactly what the pinned solcjs makes of the sources."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts"


def test_recompiling_gives_the_committed_bytes(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed, so solcjs cannot run (CI and `sng dev` have it)")
    if not (CONTRACTS / "node_modules" / "solc").is_dir():
        pytest.fail("contracts/node_modules is missing: run `npm ci --prefix contracts`")
    subprocess.run(
        [node, str(CONTRACTS / "build.mjs"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    committed = sorted(p.name for p in (CONTRACTS / "build").glob("*.json"))
    assert committed == sorted(p.name for p in tmp_path.glob("*.json"))
    for name in committed:
        fresh = (tmp_path / name).read_bytes()
        assert fresh == (CONTRACTS / "build" / name).read_bytes(), (
            f"contracts/build/{name} is stale: run `node contracts/build.mjs` and commit it"
        )
        artifact = json.loads(fresh)
        assert artifact["bytecode"].startswith("0x") and len(artifact["bytecode"]) > 1000
