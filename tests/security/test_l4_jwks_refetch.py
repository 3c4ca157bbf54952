"""L4 (security review): each token with an unknown ``kid`` fetched the identity provider's
key set again, synchronously, with no throttle.

Anyone could send tokens with made-up key ids and make the API hammer the IdP (and fill its
thread pool waiting on it). PyJWT 2.15 added a refetch cooldown to ``PyJWKClient``; the API now
requires that version and sets the cooldown to a minute, so an unknown kid refetches at most
once a minute and such tokens are refused at once meanwhile. (This test passes on the reviewed
main too, because the machine's PyJWT is already that new; the pin is what makes it hold.)
"""

from __future__ import annotations

from typing import Any

import httpx
import jwt

from core.settings import Settings
from tests.api.test_auth import jwks_server  # noqa: F401
from tests.conftest import serve_api


async def test_made_up_key_ids_do_not_refetch_the_key_set(
    settings: Settings,
    jwks_server: tuple[str, Any, list[str]],  # noqa: F811
) -> None:
    url, key, fetches = jwks_server
    configured = settings.model_copy(update={"jwt_jwks_url": url, "jwt_audience": "sng-api"})

    def token(kid: str) -> dict[str, str]:
        claims = {
            "sub": "idp-user",
            "iss": settings.jwt_issuer,
            "aud": "sng-api",
            "exp": 4_000_000_000,
        }
        signed = jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})
        return {"Authorization": f"Bearer {signed}"}

    async with serve_api(configured) as base, httpx.AsyncClient(base_url=base) as http:
        assert (await http.get("/me/balance", headers=token("idp-1"))).status_code == 200
        warm = len(fetches)
        for n in range(30):
            r = await http.get("/me/balance", headers=token(f"made-up-{n}"))
            assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text
        # One refetch for the first unknown kid, none for the next 29 within the minute.
        assert len(fetches) - warm <= 1, fetches
        assert (await http.get("/me/balance", headers=token("idp-1"))).status_code == 200
