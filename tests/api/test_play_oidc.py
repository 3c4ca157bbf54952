"""The OIDC sign-in's answers that need no identity provider (the flow itself, against a real
one, is tests/ui/test_play_oidc.py): off when no client id is set, and an IdP that cannot be
reached is a sentence and a 502, never a 500, with nothing set."""

from __future__ import annotations

import httpx

from api.play.oidc import FLOW_COOKIE
from api.play.pages import SIGNIN_COOKIE
from api.play.session import COOKIE
from core.settings import Settings, oidc_problems
from devtools.devstack import free_port
from tests.conftest import serve_api


async def test_oidc_sign_in_is_off_without_a_client_id(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        page = await http.get("/play/signin")
        assert page.status_code == 200
        assert "/play/oidc/start" not in page.text and "Sign in with token" in page.text
        for path in ("/play/oidc/start", "/play/oidc/callback?code=c&state=s"):
            r = await http.get(path)
            assert r.status_code == 404, r.text
            assert "not set up here" in r.text
        assert set(http.cookies.keys()) <= {SIGNIN_COOKIE}  # the sign-in form's own nonce


async def test_an_unreachable_identity_provider_is_a_sentence(
    settings: Settings, worker: object
) -> None:
    idp = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    configured = settings.model_copy(
        update={
            "jwt_issuer": idp,
            "jwt_jwks_url": f"{idp}/jwks",
            "jwt_audience": "sng-play",
            "oidc_client_id": "sng-play",
        }
    )
    assert oidc_problems(configured) == []
    async with serve_api(configured) as url, httpx.AsyncClient(base_url=url) as http:
        page = await http.get("/play/signin")
        assert 'href="/play/oidc/start">Sign in with 127.0.0.1</a>' in page.text
        r = await http.get("/play/oidc/start")
        assert r.status_code == 502, r.text
        assert "127.0.0.1 cannot be reached just now" in r.text
        assert not http.cookies.get(COOKIE) and not http.cookies.get(FLOW_COOKIE)
