"""L4 (security review): each token with an unknown ``kid`` fetched the identity provider's
key set again, synchronously, with no throttle.

Anyone could send tokens with made-up key ids and make the API hammer the IdP (and fill its
thread pool waiting on it). PyJWT 2.15 added a refetch cooldown to ``PyJWKClient``; the API now
requires that version and sets the cooldown to a minute, so an unknown kid refetches at most
once a minute and such tokens are refused at once meanwhile. (This test passes on the reviewed
main too, because the machine's PyJWT is already that new; the pin is what makes it hold.)
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from sng.settings import Settings
from tests.conftest import serve_api


@pytest.fixture
def counting_idp() -> Iterator[tuple[str, Any, list[str]]]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "idp-1", "use": "sig", "alg": "RS256"}]}).encode()
    fetches: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetches.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{uuid.uuid4().hex}/jwks", key, fetches
    finally:
        server.shutdown()
        server.server_close()


async def test_made_up_key_ids_do_not_refetch_the_key_set(
    settings: Settings, counting_idp: tuple[str, Any, list[str]]
) -> None:
    url, key, fetches = counting_idp
    configured = settings.model_copy(update={"jwt_jwks_url": url, "jwt_audience": "sng-api"})

    def token(kid: str) -> dict[str, str]:
        claims = {"sub": "idp-user", "iss": settings.jwt_issuer, "aud": "sng-api",
                  "exp": 4_000_000_000}  # fmt: skip
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
