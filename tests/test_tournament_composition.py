"""The tournament workflow's shape (docs/architecture.md, "The tournament workflow"): a thin
class whose handlers delegate to composed parts, none of which inherits another. The
import-linter contract in pyproject.toml keeps the parts from importing each other; this
checks what it cannot: the class bodies."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workflows" / "tournament"
HANDLER_DECORATORS = {"update", "signal", "query", "validator"}


def _classes() -> list[tuple[str, ast.ClassDef]]:
    return [
        (path.name, node)
        for path in sorted(PACKAGE.glob("*.py"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.ClassDef)
    ]


def _decorator_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _body_without_docstring(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


@pytest.mark.parametrize(("module", "cls"), _classes(), ids=lambda c: getattr(c, "name", c))
def test_no_part_inherits_another(module: str, cls: ast.ClassDef) -> None:
    # A ``Protocol`` is allowed: it names what one part asks of another (registration's
    # ``LatePlay``, which play satisfies) without either inheriting the other.
    bases = [b.id if isinstance(b, ast.Name) else ast.dump(b) for b in cls.bases]
    assert bases in ([], ["Protocol"]), f"{module}: {cls.name} is composed, not a subclass"


def test_every_handler_of_the_workflow_is_a_delegation() -> None:
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    [workflow] = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    handlers = [
        f
        for f in workflow.body
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        and _decorator_names(f) & HANDLER_DECORATORS
    ]
    assert len(handlers) == 16  # 6 Updates with their validators, 2 signals, 2 queries
    for handler in handlers:
        body = _body_without_docstring(handler)
        assert len(body) <= 2, f"{handler.name} does work of its own: delegate it to a part"
        # The last statement hands the call on to a part (self.<part>.<method>(...)).
        last = body[-1]
        call = last.value if isinstance(last, ast.Return | ast.Expr) else None
        if isinstance(call, ast.Await):
            call = call.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute), handler.name
        owner = call.func.value
        assert isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name), handler.name
        assert owner.value.id == "self", handler.name
