"""S4 (security review 3): login CSRF on ``POST /play/signin``.

An attacker's page auto-submits a form to ``/play/signin`` with the attacker's own token (or,
in dev and test, ``name=mallory``). A top-level cross-site POST may set a ``SameSite=Strict``
cookie, so the victim's browser was signed in as the attacker; when the victim later bound a
wallet on the real site, it was bound to the attacker's account (the reviewer: ``303``,
``set-cookie: sng_player=<mallory>``). Now a sign-in form carries a pre-session token that
must match the ``SameSite=Strict`` cookie the form's page set, and a request the browser marks
as cross-site is refused: ``403``, and no session cookie.
"""

from __future__ import annotations

import re

import httpx

from api.play.pages import SIGNIN_COOKIE
from api.play.session import COOKIE
from core.settings import Settings
from core.tokens import mint_player_token
from tests.security.test_play_session import post_signin

CROSS_SITE = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}


async def test_a_cross_site_sign_in_form_signs_nobody_in(api_url: str, settings: Settings) -> None:
    mallory = mint_player_token(settings, "mallory")
    async with httpx.AsyncClient(base_url=api_url) as victim:
        # What the attacker's page makes the victim's browser send: no strict cookie of ours.
        for form in ({"token": mallory}, {"name": "mallory"}, {"token": mallory, "csrf": "x"}):
            r = await victim.post("/play/signin", data=form, headers=CROSS_SITE)
            assert r.status_code == 403, r.text
            assert COOKIE not in r.cookies and not victim.cookies.get(COOKIE)
            assert "another site" in r.text
        # Even a browser that has our form's cookie: a cross-site request is not our form.
        page = await victim.get("/play/signin")
        assert victim.cookies.get(SIGNIN_COOKIE)
        r = await victim.post(
            "/play/signin",
            data={"token": mallory, "csrf": victim.cookies[SIGNIN_COOKIE]},
            headers=CROSS_SITE,
        )
        assert r.status_code == 403 and not victim.cookies.get(COOKIE)
        assert (await victim.get("/me/balance")).status_code == 401
        assert page.status_code == 200


async def test_a_form_from_this_site_signs_in(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        stale = await http.post("/play/signin", data={"name": "alice", "csrf": "old"})
        assert stale.status_code == 403 and not http.cookies.get(COOKIE)
        r = await post_signin(http, name="alice")
        assert r.status_code == 303, r.text
        assert (await http.get("/me/balance")).json()["accountId"] == "user:alice"


async def test_an_old_browser_with_a_planted_cookie_is_refused_too(
    api_url: str, settings: Settings
) -> None:
    """A browser that sends no ``Sec-Fetch-Site`` (Safari before 16.4): a sibling subdomain or
    a plain-http attacker can plant our cookie's name with a value of its choice, but the form
    must carry that value's MAC under the deployment's secret, which it cannot compute; and an
    ``Origin`` of another host is refused whatever the form says."""
    mallory = mint_player_token(settings, "mallory")
    async with httpx.AsyncClient(base_url=api_url) as victim:
        victim.cookies.set(SIGNIN_COOKIE, "planted", path="/play/signin")
        r = await victim.post("/play/signin", data={"token": mallory, "csrf": "planted"})
        assert r.status_code == 403 and not victim.cookies.get(COOKIE)
        page = await victim.get("/play/signin")
        form = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert form is not None
        r = await victim.post(
            "/play/signin",
            data={"token": mallory, "csrf": form.group(1)},
            headers={"Origin": "https://evil.example"},
        )
        assert r.status_code == 403 and not victim.cookies.get(COOKIE)
