"""S7 (security review 3): "sign in as NAME" was open on any ``SNG_ENV=test`` deployment.

It mints a token for any name with the deployment's real JWT secret, so on a staging or test
deployment anyone became anyone. Now it is for a machine's own stack only: ``dev`` or
``test``, the API bound to loopback, and the request addressed to a loopback name (a request
through a proxy or to a public name never is). Prod refuses it as before
(tests/security/test_play_session.py).
"""

from __future__ import annotations

import httpx

from api.play.session import COOKIE
from core.settings import Settings
from tests.conftest import serve_api
from tests.security.test_play_session import post_signin


async def test_a_test_deployment_on_a_public_bind_refuses_sign_in_by_name(
    settings: Settings, worker: object
) -> None:
    staging = settings.model_copy(update={"api_host": "0.0.0.0"})
    async with serve_api(staging) as url, httpx.AsyncClient(base_url=url) as http:
        page = await http.get("/play/signin")
        assert 'name="name"' not in page.text
        r = await post_signin(http, name="mallory")
        assert r.status_code == 400 and "development only" in r.text
        assert not http.cookies.get(COOKIE)


async def test_a_request_to_a_public_name_is_refused_even_on_loopback(
    api_url: str, settings: Settings
) -> None:
    """A test stack on loopback behind a proxy that passes the public Host on."""
    async with httpx.AsyncClient(base_url=api_url, headers={"Host": "staging.example"}) as http:
        r = await post_signin(http, name="mallory")
        assert r.status_code == 400 and "development only" in r.text
        assert not http.cookies.get(COOKIE)
    # A proxy on the same host: it connects from loopback and may pass a loopback Host on.
    async with httpx.AsyncClient(
        base_url=api_url, headers={"X-Forwarded-For": "203.0.113.9"}
    ) as http:
        r = await post_signin(http, name="mallory")
        assert r.status_code == 400 and "development only" in r.text
    async with httpx.AsyncClient(base_url=api_url) as http:  # this machine's own: allowed
        assert (await post_signin(http, name="alice")).status_code == 303
