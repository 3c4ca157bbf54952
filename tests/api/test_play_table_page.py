"""The table page's shell (api/play/table.py): who gets their own socket and who watches.

The page opens the per-player WebSocket only for a person at the table (a tournament's
entrant, a room's player); anyone else, signed in or not, is an observer on the public
stream. An unknown table is a 404 page, not an error.
"""

from __future__ import annotations

import re

import httpx

from api.play.session import COOKIE, CSRF_HEADER, csrf_token
from core.settings import Settings
from core.tokens import mint_player_token
from tests.integration.helpers import create, credit, player
from tests.integration.test_rooms import open_room


def _data(html: str) -> dict[str, str]:
    section = re.search(r'<section id="table"(.*?)>', html, re.S)
    assert section is not None, html
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', section.group(1)))


async def _page(url: str, path: str, user: str | None, settings: Settings) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url) as http:
        if user is not None:
            http.cookies.set(COOKIE, mint_player_token(settings, user))
        return await http.get(path)


async def test_an_entrant_gets_their_socket_and_everyone_else_watches(
    api_url: str, settings: Settings
) -> None:
    token = mint_player_token(settings, "table-entrant")
    async with httpx.AsyncClient(base_url=api_url) as http:
        tournament = await create(http, settings)
        await credit(http, settings, "table-entrant", 10_000)
        http.cookies.set(COOKIE, token)
        r = await http.post(
            f"/tournaments/{tournament}/register", json={}, headers={CSRF_HEADER: csrf_token(token)}
        )
        assert r.status_code == 200, r.text
    path = f"/play/tournaments/{tournament}/table"

    r = await _page(api_url, path, "table-entrant", settings)
    assert r.status_code == 200, r.text
    assert "default-src 'self'" in r.headers["content-security-policy"]
    data = _data(r.text)
    assert data["mode"] == "player"
    assert data["socket"] == f"/tournaments/{tournament}/me/ws"
    assert data["results"] == f"/play/tournaments/{tournament}/results"
    assert f'href="/play/tournaments/{tournament}"' in r.text
    assert 'role="alert"' in r.text and 'id="advice"' in r.text

    for watcher in ("table-passer-by", None):
        r = await _page(api_url, path, watcher, settings)
        assert r.status_code == 200, r.text
        data = _data(r.text)
        assert (data["mode"], data["socket"]) == ("observer", "")
        assert data["public"] == f"/tournaments/{tournament}/events"
        assert 'data-act="fold"' not in r.text  # no action buttons for an observer


async def test_a_room_player_gets_their_socket(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings, seats=2)
        await credit(http, settings, "table-sitter", 5000)
        r = await http.post(
            f"/rooms/{room_id}/join", json={}, headers=player(settings, "table-sitter")
        )
        assert r.status_code == 200, r.text
    path = f"/play/rooms/{room_id}/table"
    data = _data((await _page(api_url, path, "table-sitter", settings)).text)
    assert (data["mode"], data["socket"]) == ("player", f"/rooms/{room_id}/me/ws")
    data = _data((await _page(api_url, path, None, settings)).text)
    assert (data["mode"], data["public"]) == ("observer", f"/rooms/{room_id}/stream")


async def test_an_unknown_table_is_a_404_page(api_url: str, settings: Settings) -> None:
    for path, heading in (
        ("/play/tournaments/t_nope/table", "No tournament t_nope"),
        ("/play/rooms/room_0000000000/table", "No room room_0000000000"),
        ("/play/rooms/bad%20id!/table", "No room bad id!"),
    ):
        r = await _page(api_url, path, "table-lost", settings)
        assert r.status_code == 404, (path, r.text)
        assert heading in r.text
        assert "default-src 'self'" in r.headers["content-security-policy"]
