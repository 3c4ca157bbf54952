"""The API's documentation names only what the API has (issue 28).

- docs/api.md carries one catalogue of every refusal code, generated from ``ErrorCode``
  (domain/errors.py) and ``STATUS`` (api/errors.py) by ``python -m devtools.refusals``: a code
  added without regenerating it fails here.
- Every code the docs present as one (a "`409 xyz`" mention, a "codes: `x`, `y`" list, the
  api.md Errors section, the OpenAPI error descriptions) exists, with the status it has.
- Every route docs/api.md names with its method is in the OpenAPI document, and
  ``GET /tournaments/settings-schema`` serves the settings' JSON Schema with the wire names.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import jsonschema_rs

from api.app import create_app
from api.errors import STATUS
from api.openapi import DESCRIPTIONS
from core.settings import Settings
from devtools.refusals import BEGIN, END, catalogue, documented_catalogue
from domain.errors import ErrorCode
from tests.integration.helpers import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
CODES = {code.value: status for code, status in STATUS.items()}
SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*"


def _api_md() -> str:
    return (ROOT / "docs" / "api.md").read_text()


def test_the_catalogue_in_the_docs_is_the_one_the_code_generates() -> None:
    text = _api_md()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "docs/api.md lost its markers"
    assert documented_catalogue(text) == catalogue(), (
        "docs/api.md's refusal catalogue is stale: run `python -m devtools.refusals --write`"
    )


def test_the_catalogue_lists_every_code_with_its_status() -> None:
    rows = re.findall(r"^\| `(" + SNAKE + r")` \| (\d{3}) \|", catalogue(), re.MULTILINE)
    assert [code for code, _ in rows] == [code.value for code in ErrorCode]
    assert {code: int(status) for code, status in rows} == CODES


def _mentions(text: str) -> list[tuple[int | None, str]]:
    """(status or None, code) for every code the text presents as an error code."""
    found: list[tuple[int | None, str]] = [
        (int(status), code) for status, code in re.findall(r"`(\d{3}) (" + SNAKE + r")`", text)
    ]
    listed = r"codes?:\s*((?:`" + SNAKE + r"`(?:,\s*|\s*/\s*|\s+or\s+|\s+and\s+)?)+)"
    for match in re.finditer(listed, text):
        found += [(None, code) for code in re.findall(r"`(" + SNAKE + r")`", match.group(1))]
    return found


def _wrong(mentions: list[tuple[int | None, str]]) -> list[tuple[int | None, str]]:
    return [
        (status, code)
        for status, code in mentions
        if code not in CODES or (status is not None and CODES[code] != status)
    ]


def test_every_code_the_docs_name_exists_with_its_status() -> None:
    wrong = {doc.relative_to(ROOT).as_posix(): _wrong(_mentions(doc.read_text())) for doc in DOCS}
    assert {doc: bad for doc, bad in wrong.items() if bad} == {}


def test_every_code_in_the_errors_section_and_the_openapi_descriptions_exists() -> None:
    """The prose before the generated table, and each status's description in the OpenAPI
    document (``with `field``` names the body's key, not a code)."""
    prose = _api_md().split("\n## Errors\n", 1)[1].split("\n### The refusal codes\n", 1)[0]
    named = re.findall(r"`(" + SNAKE + r")`", prose)
    named += [
        code for text in DESCRIPTIONS.values() for code in re.findall(r"(?<!with )`(\w+)`", text)
    ]
    assert named and [code for code in named if code not in CODES] == []


def test_the_checks_see_a_stale_code() -> None:
    """The mention checks are not vacuous: the old names the docs used are caught."""
    assert _wrong(_mentions("a `422 invalid_amount`, or `409 not_your_turn`")) == [
        (422, "invalid_amount")
    ]
    assert _wrong(_mentions("(codes: `stale_turn`, `invalid_amount`)")) == [
        (None, "invalid_amount")
    ]
    assert _wrong(_mentions("`404 not_your_turn`")) == [(404, "not_your_turn")]


def test_every_route_docs_api_names_is_in_the_openapi_document() -> None:
    paths = create_app(Settings(env="test")).openapi()["paths"]
    documented = {
        (method.upper(), re.sub(r"\{[^}]*\}", "{}", path))
        for path, operations in paths.items()
        for method in operations
    }
    named = {
        (method, re.sub(r"\{[^}]*\}", "{}", path))
        for method, path in re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`\s?]*)", _api_md())
    }
    assert ("GET", "/tournaments/settings-schema") in named
    assert named - documented == set()


async def test_the_settings_schema_is_served_and_validates_the_wire_settings(
    api_url: str,
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=15) as http:
        r = await http.get("/tournaments/settings-schema")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json"), r.headers
        assert "public" in r.headers.get("cache-control", ""), r.headers
        schema = r.json()
        # jsonschema_rs comes with schemathesis (the ``jsonschema`` package is not installed).
        jsonschema_rs.meta.validate(schema)
        validator = jsonschema_rs.Draft202012Validator(schema)
        assert list(validator.iter_errors(SETTINGS)) == []
        assert {"entryFee", "startingStack", "blindStructure"} <= set(schema["properties"])
        # What the domain refuses as unknown or misspelt, the schema refuses too.
        assert not validator.is_valid({**SETTINGS, "entry_fee": 100})
        assert not validator.is_valid({**SETTINGS, "seats": 11})
        # No credential needed, and the OpenAPI document has it.
        doc = (await http.get("/openapi.json")).json()
        assert "get" in doc["paths"]["/tournaments/settings-schema"]
