"""A client generated from the live ``/openapi.json`` plays a hand (issue 28).

openapi-python-client reads the document the running API serves and writes a typed package.
It must do so without a warning (a schema it cannot parse is dropped, with every route that
answers it: two models both named ``Stakes`` once cost it ``GameState`` and ``RoomRecord``),
and the package must then be enough to play: an operator opens a room and credits two
players, both join, and each acts on its turn from the game state it reads until the first
hand is over; its record is read back through the generated ``HandRecord``. Every credential
goes through the generated ``AuthenticatedClient`` (the document's security schemes: a bearer
token, ``X-Agent-Key``, ``X-Service-Key``), never as a parameter of an endpoint.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import shutil
import sys
import sysconfig
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from core.settings import Settings
from core.tokens import mint_player_token
from tests.api.support import new_agent

PACKAGE = "sng_generated_client"
MODELS = {"game_state", "room_record", "hand_record", "legal_actions", "act_result", "event_page"}
"""Models the generated package must have: the answers a player's loop and a viewer read."""


def generator() -> str:
    candidate = Path(sysconfig.get_path("scripts")) / "openapi-python-client"
    return str(candidate) if candidate.exists() else (shutil.which("openapi-python-client") or "")


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[Path]:
    """Where the package is written; it is importable from there for the test only."""
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


async def _generate(api_url: str, where: Path) -> str:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.get("/openapi.json")
        assert r.status_code == 200, r.text
    document = where / "openapi.json"
    document.write_text(json.dumps(r.json()))
    proc = await asyncio.create_subprocess_exec(
        generator(),
        "generate",
        "--path",
        str(document),
        "--output-path",
        str(where / PACKAGE),
        "--meta",
        "none",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        # It formats what it writes with ruff, found on PATH: the one installed beside it.
        env={**os.environ, "PATH": f"{Path(generator()).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text
    return text


def _unnamed(value: Any, at: str = "") -> list[str]:
    """Keys the server sent that the schema does not name, at any depth: the generated models
    keep them aside in ``additional_properties`` (a ``hole_cards`` beside ``holeCards`` would
    land there)."""
    if isinstance(value, list):
        return [k for i, v in enumerate(value) for k in _unnamed(v, f"{at}[{i}]")]
    if not hasattr(type(value), "__attrs_attrs__"):
        return []
    # A schema with additionalProperties false (the served models refuse unknown keys on
    # the server's side too) has no such field.
    declared = [a.name for a in type(value).__attrs_attrs__ if a.name != "additional_properties"]
    extra = getattr(value, "additional_properties", {})
    if not declared:  # a map (``winners`` by seat): its keys are data
        return [k for key, v in extra.items() for k in _unnamed(v, f"{at}[{key}]")]
    found = [f"{at}.{k}" for k in extra]
    for name in type(value).__attrs_attrs__:
        if name.name != "additional_properties":
            found += _unnamed(getattr(value, name.name), f"{at}.{name.name}")
    return found


def _api(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.api.{name}")


async def test_a_generated_client_builds_without_warnings_and_plays_a_hand(
    api_url: str, settings: Settings, generated: Path
) -> None:
    output = await _generate(api_url, generated)
    assert "Warning" not in output and "Unable" not in output, output
    written = {p.stem for p in (generated / PACKAGE / "models").glob("*.py")}
    assert MODELS <= written, sorted(MODELS - written)

    client = importlib.import_module(f"{PACKAGE}.client")
    models = importlib.import_module(f"{PACKAGE}.models")
    admin_api = _api("admin")
    rooms = importlib.import_module(f"{PACKAGE}.api.rooms")
    me = importlib.import_module(f"{PACKAGE}.api.me")

    def endpoint(package: ModuleType, name: str) -> Any:
        return importlib.import_module(f"{package.__name__}.{name}")

    operator = client.AuthenticatedClient(
        base_url=api_url, token=settings.key("admin"), prefix="", auth_header_name="X-Service-Key"
    )
    users = [f"gen-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
    players = [
        client.AuthenticatedClient(base_url=api_url, token=mint_player_token(settings, u))
        for u in users
    ]

    credit = endpoint(admin_api, "credit_admin_ledger_credit_post")
    for u in users:
        body = models.CreditBody.from_dict(
            {"userId": u, "amount": 3000, "idempotencyKey": f"gen-{u}"}
        )
        r = await credit.asyncio_detailed(client=operator, body=body)
        assert r.status_code == 200, r.content

    created = await endpoint(rooms, "create_room_rooms_post").asyncio_detailed(
        client=operator,
        body=models.CreateRoomBody.from_dict(
            {
                "name": "generated",
                "entry": {"amount": 1000},
                "stakes": {"smallBlind": 5, "bigBlind": 10},
                "seats": 2,
                "speed": "turbo",
                "handPauseMs": 0,
            }
        ),
    )
    assert created.status_code == 201, created.content
    assert isinstance(created.parsed, models.RoomRecord), created.content
    assert _unnamed(created.parsed) == [], created.content
    room_id = created.parsed.room_id

    join = endpoint(rooms, "join_room_rooms_room_id_join_post")
    for p in players:
        r = await join.asyncio_detailed(room_id, client=p, body=models.JoinBody())
        assert r.status_code == 200, r.content
        assert isinstance(r.parsed, models.JoinResult)

    read = endpoint(rooms, "room_game_state_rooms_room_id_game_state_get")
    act = endpoint(rooms, "room_action_rooms_room_id_action_post")
    finished = None
    async with asyncio.timeout(60):
        while finished is None:
            for p in players:
                r = await read.asyncio_detailed(room_id, client=p)
                assert r.status_code == 200, r.content
                state = r.parsed
                assert isinstance(state, models.GameState), r.content
                assert _unnamed(state) == [], r.content
                if isinstance(state.last_hand, models.LastHand):
                    finished = state.last_hand.hand_number
                    break
                legal = state.legal_actions
                if not isinstance(legal, models.LegalActions) or not isinstance(state.turn, int):
                    continue
                choice = "check" if "check" in [str(a) for a in legal.actions] else "call"
                body = models.ActBody.from_dict(
                    {"handNumber": state.hand_number, "turn": state.turn, "action": choice}
                )
                acted = await act.asyncio_detailed(room_id, client=p, body=body)
                # 409 stale_turn: the hand moved on meanwhile; read the state again.
                assert acted.status_code in (200, 409), acted.content
                if acted.status_code == 200:
                    assert isinstance(acted.parsed, models.ActResult)
            await asyncio.sleep(0.05)
    assert finished == 1

    hand = await endpoint(rooms, "room_hand_rooms_room_id_hands_hand_number_get").asyncio_detailed(
        room_id, 1, client=players[0]
    )
    assert hand.status_code == 200, hand.content
    assert isinstance(hand.parsed, models.HandRecord), hand.content
    assert _unnamed(hand.parsed) == [], hand.content
    assert hand.parsed.hand_number == 1

    # An agent's key goes through the same client, as the document's X-Agent-Key scheme.
    async with httpx.AsyncClient(base_url=api_url) as http:
        agent = await new_agent(http, settings, users[0])
    bot = client.AuthenticatedClient(
        base_url=api_url, token=agent["key"], prefix="", auth_header_name="X-Agent-Key"
    )
    r = await endpoint(me, "my_balance_me_balance_get").asyncio_detailed(client=bot)
    assert r.status_code == 200, r.content
    assert isinstance(r.parsed, models.Balance)

    r = await endpoint(rooms, "close_room_rooms_room_id_close_post").asyncio_detailed(
        room_id, client=operator
    )
    assert r.status_code == 200, r.content


# -- what the document says, read offline -------------------------------------------------------
CAMEL = r"^[a-z][a-zA-Z0-9]*$"


def _document() -> dict[str, Any]:
    from api.app import create_app

    doc: dict[str, Any] = create_app(Settings(env="test")).openapi()
    return doc


def test_every_schema_has_a_name_of_its_own() -> None:
    """Two models of one name are told apart by their module (``wire__game_state__Stakes``):
    generators then collide on the class name and drop both, and what refers to them."""
    names = list(_document()["components"]["schemas"])
    assert [n for n in names if "__" in n] == []
    classes = [re.sub(r"[^A-Za-z0-9]", "", n).lower() for n in names]
    assert len(set(classes)) == len(classes), sorted(names)


def test_every_property_is_named_as_the_wire_sends_it() -> None:
    """The server writes camelCase (``handNumber``); a schema that says ``hand_number`` makes
    a generated client read nothing there."""
    snake = [
        f"{name}.{prop}"
        for name, schema in _document()["components"]["schemas"].items()
        for prop in schema.get("properties", {})
        if not re.match(CAMEL, prop)
    ]
    assert snake == []


def test_credentials_are_security_schemes_not_parameters() -> None:
    doc = _document()
    schemes = doc["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}
    by_header = {s.get("name", "Authorization").lower(): s for s in schemes.values()}
    assert {"authorization", "x-agent-key", "x-service-key"} <= set(by_header)
    credential_params = [
        f"{method.upper()} {path} {p['name']}"
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
        for p in operation.get("parameters", [])
        if p["in"] == "header"
        and p["name"].lower() in {"authorization", "x-agent-key", "x-service-key"}
    ]
    assert credential_params == []
    secured = {
        (method.upper(), path): operation.get("security")
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
    }
    # A player's route takes a bearer token or an agent key (either); an operator's the key;
    # an observer's route a credential if one is sent (``{}``: none at all is fine too).
    act = secured[("POST", "/rooms/{room_id}/action")]
    assert act is not None and len(act) == 2
    assert secured[("POST", "/admin/tournaments")] is not None
    observe = secured[("GET", "/rooms/{room_id}/game-state")]
    assert observe is not None and {} in observe
    assert secured[("GET", "/tournaments")] is None
