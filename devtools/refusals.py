"""The catalogue of refusal codes in docs/api.md, generated from the code.

Each row is one ``ErrorCode`` (domain/errors.py, in its order), its HTTP status (``STATUS``,
api/errors.py) and its meaning (the docstring under the member). The table sits between two
marker comments in docs/api.md; ``tests/api/test_docs_match_the_api.py`` fails when it differs
from what this renders, so a code added without regenerating fails the checks::

    python -m devtools.refusals --write   # rewrite the table in docs/api.md
    python -m devtools.refusals --check   # exit 1 when docs/api.md is stale
    python -m devtools.refusals           # print the table
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
from pathlib import Path

import domain.errors
from api.errors import STATUS
from domain.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[1]
API_MD = ROOT / "docs" / "api.md"
BEGIN = "<!-- refusal-catalogue:begin (python -m devtools.refusals --write) -->"
END = "<!-- refusal-catalogue:end -->"


def meanings() -> dict[ErrorCode, str]:
    """Each code's docstring (the string literal under its member), on one line."""
    tree = ast.parse(inspect.getsource(domain.errors))
    body = next(
        node.body
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name == ErrorCode.__name__
    )
    found: dict[ErrorCode, str] = {}
    for member, after in zip(body, [*body[1:], None], strict=True):
        if not (isinstance(member, ast.Assign) and isinstance(member.targets[0], ast.Name)):
            continue
        if (
            isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[ErrorCode[member.targets[0].id]] = " ".join(after.value.value.split())
    return found


def _cell(text: str) -> str:
    return text.replace("``", "`").replace("|", "\\|")


def catalogue() -> str:
    """The markdown table: every code, its status and its meaning."""
    meaning = meanings()
    missing = [code.name for code in ErrorCode if code not in meaning or code not in STATUS]
    if missing:
        raise ValueError(f"codes without a docstring or an HTTP status: {missing}")
    rows = [f"| `{code.value}` | {STATUS[code]} | {_cell(meaning[code])} |" for code in ErrorCode]
    return "\n".join(["| code | HTTP | meaning |", "|---|---|---|", *rows])


def documented_catalogue(text: str) -> str:
    """What docs/api.md has between the markers."""
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def regenerated(text: str) -> str:
    """``text`` with the table between the markers replaced by the current one."""
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{BEGIN}\n{catalogue()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.refusals", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the table in docs/api.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when docs/api.md is stale")
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        print(catalogue())
        return 0
    text = API_MD.read_text()
    fresh = regenerated(text)
    if args.check:
        if fresh != text:
            print("docs/api.md: the refusal catalogue is stale; run with --write", file=sys.stderr)
            return 1
        return 0
    API_MD.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
