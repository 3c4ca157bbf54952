"""The players' pages sign a person in with a cookie holding their own player JWT
(api/play/session.py). A cookie is sent by the browser on its own, so a request it alone
proves must not let another site's page act for the person: a request that changes
something needs the page's X-CSRF-Token too; reads and the same-origin WebSocket do not.
"""

from __future__ import annotations

import re

import httpx
import pytest

from api.play.session import COOKIE, CSRF_HEADER, csrf_token
from core.settings import Settings
from core.tokens import mint_player_token
from tests.integration.helpers import create, credit


async def post_signin(http: httpx.AsyncClient, **data: str) -> httpx.Response:
    """Sign in as a browser does: load the form (its pre-session token), then send it."""
    page = await http.get("/play/signin")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None, page.text
    return await http.post("/play/signin", data={**data, "csrf": token.group(1)})


async def test_a_cookie_alone_cannot_register_or_take_chips(
    api_url: str, settings: Settings
) -> None:
    token = mint_player_token(settings, "cookie-victim")
    async with httpx.AsyncClient(base_url=api_url) as http:
        tournament = await create(http, settings)
        await credit(http, settings, "cookie-victim", 10_000)
        http.cookies.set(COOKIE, token)
        # What a forged cross-site request carries: the cookie, no page token.
        forged = await http.post(f"/tournaments/{tournament}/register", json={})
        assert forged.status_code == 401, forged.text
        assert forged.json()["code"] == "unauthorized"
        wrong = await http.post(
            f"/tournaments/{tournament}/register", json={}, headers={CSRF_HEADER: "0" * 40}
        )
        assert wrong.status_code == 401, wrong.text
        faucet = await http.post("/me/faucet", json={})
        assert faucet.status_code == 401, faucet.text
        # Nothing changed: the person is not registered.
        entrants = (await http.get(f"/tournaments/{tournament}")).json()
        assert "cookie-victim" not in str(entrants.get("entrants", entrants))
        # Reads need no page token, and the page's own request goes through.
        me = await http.get("/me/balance")
        assert me.status_code == 200, me.text
        assert me.json()["accountId"] == "user:cookie-victim"
        ok = await http.post(
            f"/tournaments/{tournament}/register",
            json={},
            headers={CSRF_HEADER: csrf_token(token)},
        )
        assert ok.status_code == 200, ok.text


async def test_a_header_credential_wins_over_the_cookie(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        http.cookies.set(COOKIE, mint_player_token(settings, "cookie-person"))
        other = mint_player_token(settings, "header-person")
        r = await http.get("/me/balance", headers={"Authorization": f"Bearer {other}"})
        assert r.status_code == 200, r.text
        assert r.json()["accountId"] == "user:header-person"


async def test_sign_in_by_name_sets_the_cookie_and_prod_refuses_it(
    api_url: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await post_signin(http, name="alice")
        assert r.status_code == 303, r.text
        assert http.cookies.get(COOKIE)
        assert (await http.get("/me/balance")).json()["accountId"] == "user:alice"
        bad = await post_signin(http, token="not-a-jwt")
        assert bad.status_code == 400
        assert "refused" in bad.text


@pytest.mark.parametrize("name", ["agent-x", "anon:1", "a b", ""])
async def test_sign_in_refuses_names_that_are_not_user_ids(
    api_url: str, settings: Settings, name: str
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await post_signin(http, name=name)
        assert r.status_code == 400, r.text
        assert not http.cookies.get(COOKIE)


async def test_prod_refuses_sign_in_by_name(settings: Settings, worker: object) -> None:
    from pydantic import SecretStr

    from tests.conftest import serve_api

    strong = {
        name: SecretStr(letter * 32)
        for name, letter in (
            ("admin_key", "a"),
            ("internal_key", "i"),
            ("codec_endpoint_key", "c"),
            ("jwt_secret", "j"),
        )
    }
    prod = settings.model_copy(
        update={"env": "prod", "public_url": "https://poker.example", **strong}
    )
    async with serve_api(prod) as url, httpx.AsyncClient(base_url=url) as http:
        page = await http.get("/play/signin")
        assert page.status_code == 200
        assert 'name="name"' not in page.text
        r = await post_signin(http, name="mallory")
        assert r.status_code == 400
        assert "development only" in r.text
        assert not http.cookies.get(COOKIE)
