"""A person's browser session on the players' pages: their own player JWT in a cookie.

The cookie ``sng_player`` holds the very bearer token the players' API accepts (minted by
"sign in as NAME" in dev, or pasted / brought by the identity provider in production), so the
page is one more client of the same API, with the same checks (``api.auth``): no second kind
of credential, no server-side session store, and the token's ``exp`` ends the session.

- ``HttpOnly`` (a script on the page cannot read it), ``SameSite=Strict`` (another site's
  request arrives without it), ``Secure`` behind TLS and in prod, ``Path=/`` (the pages call
  the JSON API and open the per-player WebSocket with it).
- CSRF: a request that changes something (any method but GET/HEAD/OPTIONS) and proves itself
  by this cookie alone must also carry ``X-CSRF-Token``, a hash of the token that the page
  embeds and another origin cannot read or compute. A WebSocket upgrade needs none: the
  sockets' guard refuses an upgrade whose ``Origin`` is another site's (``api.guards``).
"""

from __future__ import annotations

import hashlib
import hmac
import time

import jwt
from fastapi import Request, Response
from starlette.requests import HTTPConnection

from api.state import state_of

COOKIE = "sng_player"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_SESSION_SECONDS = 12 * 3600


def csrf_token(token: str) -> str:
    """The page's CSRF token for a session: bound to the token, useless without it."""
    return hashlib.sha256(b"sng-play-csrf-v1:" + token.encode()).hexdigest()[:40]


def cookie_token(connection: HTTPConnection) -> str | None:
    token = connection.cookies.get(COOKIE)
    return token.strip() if token and token.strip() else None


def csrf_ok(connection: HTTPConnection, token: str) -> bool:
    """Whether a request proved by the cookie may go on: safe methods and WebSocket upgrades
    always (see the module's note), others only with the page's ``X-CSRF-Token``."""
    if connection.scope["type"] != "http":
        return True
    if connection.scope.get("method", "GET") in SAFE_METHODS:
        return True
    sent = connection.headers.get(CSRF_HEADER, "")
    return hmac.compare_digest(sent.encode(), csrf_token(token).encode())


def set_player_cookie(response: Response, request: Request, token: str) -> None:
    """Keep the (already verified) token in the session cookie until its ``exp``."""
    try:
        exp = jwt.decode(token, options={"verify_signature": False}).get("exp")
    except jwt.PyJWTError:
        exp = None
    max_age = MAX_SESSION_SECONDS
    if isinstance(exp, int | float):
        max_age = max(0, min(max_age, int(exp - time.time())))
    response.set_cookie(
        COOKIE,
        token,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https" or state_of(request.app).settings.env == "prod",
    )


def clear_player_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
