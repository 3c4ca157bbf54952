"""Credentials through HTTP: player JWTs (HS256 and JWKS), agent keys, and their refusals."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import text

from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from tests.api.support import agent_headers, new_agent
from tests.conftest import serve_api
from tests.integration.helpers import admin, player

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def claims(settings: Settings, sub: str = "jwt-alice", **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": sub, "iss": settings.jwt_issuer, "iat": now, "exp": now + 60, **extra}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def me(http: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    return await http.get("/me/balance", headers=headers)


async def test_player_tokens_are_checked(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        ok = await me(http, player(settings, "jwt-alice"))
        assert (ok.status_code, ok.json()["userId"]) == (200, "jwt-alice")

        expired = jwt.encode(
            claims(settings, exp=int(time.time()) - 120),
            settings.jwt_secret.get_secret_value(),
            algorithm="HS256",
        )
        forged = jwt.encode(claims(settings), "not-the-secret-0123456789abcdef", algorithm="HS256")
        other_issuer = jwt.encode(
            claims(settings, iss="elsewhere"), settings.jwt_secret.get_secret_value(), "HS256"
        )
        no_exp = jwt.encode(
            {"sub": "x", "iss": settings.jwt_issuer},
            settings.jwt_secret.get_secret_value(),
            "HS256",
        )
        unsigned = jwt.encode(claims(settings), None, algorithm="none")
        hs512 = jwt.encode(
            claims(settings), settings.jwt_secret.get_secret_value(), algorithm="HS512"
        )
        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        rs256_without_jwks = jwt.encode(claims(settings), rsa_key, algorithm="RS256")
        for token in (expired, forged, other_issuer, no_exp, unsigned, hs512, rs256_without_jwks):
            r = await me(http, bearer(token))
            assert (r.status_code, r.json()["code"]) == (401, "unauthorized"), token

        for headers in (
            {},
            {"Authorization": "Basic dXNlcjpwYXNz"},
            {"Authorization": "Bearer"},
            {"Authorization": "Bearer not.a.jwt"},
            {"X-Service-Key": settings.key("admin")},
        ):
            r = await me(http, headers)
            assert (r.status_code, r.json()["code"]) == (401, "unauthorized"), headers


async def test_agents_authenticate_by_key_until_revoked(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        created = await new_agent(http, settings, "key-owner")
        key, agent_id = created["key"], created["agentId"]
        assert key.startswith("sk_") and created["keyPrefix"] == key[:11]
        assert created["skills"] == ["poker:sng"] and created["revokedAt"] is None

        for headers in (agent_headers(key), bearer(key)):
            r = await me(http, headers)
            assert (r.status_code, r.json()["userId"]) == (200, agent_id), r.text

        # Only the hash is stored, and reading the agent back never shows the key.
        async with db.engine.connect() as conn:
            stored = (
                await conn.execute(
                    text("SELECT key_hash FROM agents WHERE agent_id = :id"), {"id": agent_id}
                )
            ).scalar_one()
        assert key not in stored and len(stored) == 64
        shown = await http.get(f"/admin/agents/{agent_id}", headers=admin(settings))
        assert shown.status_code == 200 and "key" not in shown.json()
        listed = await http.get(
            "/admin/agents", params={"ownerUserId": "key-owner"}, headers=admin(settings)
        )
        assert [a["agentId"] for a in listed.json()] == [agent_id]

        both = {**agent_headers(key), **player(settings, "key-owner")}
        for headers in (both, agent_headers("sk_unknown"), bearer("sk_unknown")):
            r = await me(http, headers)
            assert (r.status_code, r.json()["code"]) == (401, "unauthorized"), headers

        revoked = await http.post(f"/admin/agents/{agent_id}/revoke", headers=admin(settings))
        assert revoked.status_code == 200 and revoked.json()["revokedAt"] is not None
        again = await http.post(f"/admin/agents/{agent_id}/revoke", headers=admin(settings))
        assert again.json()["revokedAt"] == revoked.json()["revokedAt"]
        r = await me(http, agent_headers(key))
        assert (r.status_code, r.json()["code"]) == (401, "unauthorized")

        missing = await http.post("/admin/agents/agent-nope/revoke", headers=admin(settings))
        assert (missing.status_code, missing.json()["code"]) == (404, "agent_not_found")
        bad = await http.post(
            "/admin/agents",
            json={"ownerUserId": "x", "name": "x", "skills": ["Not A Skill!"]},
            headers=admin(settings),
        )
        assert (bad.status_code, bad.json()["code"]) == (422, "validation_error")


@pytest.fixture
def jwks_server() -> Iterator[tuple[str, Any, list[str]]]:
    """A loopback identity provider publishing one RSA key as a JWKS document; the list
    records every fetch."""
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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json", key, fetches
    finally:
        server.shutdown()
        server.server_close()


async def test_identity_provider_tokens_via_jwks(
    settings: Settings, jwks_server: tuple[str, Any, list[str]]
) -> None:
    url, key, _ = jwks_server
    configured = settings.model_copy(update={"jwt_jwks_url": url, "jwt_audience": "sng-api"})
    good = jwt.encode(
        claims(settings, sub="idp-user", aud="sng-api"),
        key,
        algorithm="RS256",
        headers={"kid": "idp-1"},
    )
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(
        claims(settings, aud="sng-api"), impostor, algorithm="RS256", headers={"kid": "idp-1"}
    )
    wrong_audience = jwt.encode(
        claims(settings, aud="other"), key, algorithm="RS256", headers={"kid": "idp-1"}
    )
    unknown_kid = jwt.encode(
        claims(settings, aud="sng-api"), key, algorithm="RS256", headers={"kid": "nope"}
    )
    async with serve_api(configured) as base, httpx.AsyncClient(base_url=base) as http:
        ok = await me(http, bearer(good))
        assert (ok.status_code, ok.json()["userId"]) == (200, "idp-user"), ok.text
        for token in (forged, wrong_audience, unknown_kid):
            r = await me(http, bearer(token))
            assert (r.status_code, r.json()["code"]) == (401, "unauthorized"), token
        # HS256 tokens from `sng token` still work beside the provider's.
        r = await me(http, bearer(mint_player_token(configured, "hs-user")))
        assert (r.status_code, r.json()["userId"]) == (200, "hs-user")


async def test_cli_creates_an_agent_key_that_authenticates(
    api_url: str, settings: Settings
) -> None:
    env = {**os.environ, "DATABASE_URL": settings.database_url}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sng.cli",
        "agent-key",
        "cli-owner",
        "--name",
        "cli bot",
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    stdout, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
    out = dict(line.split("=", 1) for line in stdout.decode().split())
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await me(http, agent_headers(out["key"]))
        assert (r.status_code, r.json()["userId"]) == (200, out["agent_id"]), r.text


async def test_a_remembered_token_still_expires_and_is_bound_to_its_keys() -> None:
    """Verified tokens are remembered (pollers send one many times a second), never past
    their ``exp``, and only under the keys and claims they were verified with."""
    from api.auth import verify_player_token
    from api.errors import ApiError

    signer = Settings(env="test", jwt_secret="a-secret-of-at-least-32-bytes-long!!")
    other = Settings(env="test", jwt_secret="another-secret-of-32-bytes-or-more!!")
    token = mint_player_token(signer, "remembered", ttl_seconds=2)
    assert (await verify_player_token(signer, token)).user_id == "remembered"
    assert (await verify_player_token(signer, token)).user_id == "remembered"  # from memory
    with pytest.raises(ApiError):
        await verify_player_token(other, token)  # another secret: verified again, refused
    await asyncio.sleep(2.2)
    with pytest.raises(ApiError):
        await verify_player_token(signer, token)  # expired, however recently verified
