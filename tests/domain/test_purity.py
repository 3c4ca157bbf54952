"""domain/ stays pure: no framework, database, chain or Temporal imports, no clock, no randomness."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
FORBIDDEN_MODULES = {
    "temporalio",
    "fastapi",
    "sqlmodel",
    "sqlalchemy",
    "web3",
    "asyncpg",
    "random",
    "time",
    "datetime",
    "secrets",
    "os",
    "httpx",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(
    "path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN))
)
def test_domain_module_is_pure(path: Path) -> None:
    assert not (_imports(path) & FORBIDDEN_MODULES), (
        f"{path.name} imports {_imports(path) & FORBIDDEN_MODULES}"
    )
