"""The operators' browser session: a signed cookie from the service key, and CSRF tokens.

An operator logs in by typing the service key once. The cookie then holds
``<expires>.<nonce>.<signature>``: the signature is an HMAC-SHA256 under a key derived from
the service key, so the cookie never carries the key itself, nothing is stored server-side
(API replicas stay stateless), and rotating the service key ends every session at once.

POSTs are CSRF-safe twice over: the cookie is ``SameSite=Strict`` (a cross-site form post
arrives without it), and every form carries a token, an HMAC of the session's nonce, that
a page on another origin cannot read.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import Depends, HTTPException, Request, Response

from api.auth import key_matches
from api.state import state_of
from core.settings import Settings

COOKIE = "sng_admin"
COOKIE_PATH = "/ui"
SESSION_SECONDS = 8 * 3600
MAX_FORM_BYTES = 64 * 1024


@dataclass(frozen=True)
class OperatorSession:
    nonce: str
    expires: int

    def csrf_token(self, settings: Settings) -> str:
        return _sign(settings, f"csrf:{self.nonce}")


def _sign(settings: Settings, message: str) -> str:
    # A purpose-bound key: the same service key also guards the JSON API's X-Service-Key.
    key = hmac.new(settings.key("admin").encode(), b"sng-admin-session-v1", hashlib.sha256)
    return hmac.new(key.digest(), message.encode(), hashlib.sha256).hexdigest()


def admin_key_matches(settings: Settings, typed: str) -> bool:
    return key_matches(typed, settings.key("admin"))


def new_session_cookie(settings: Settings, *, now: float | None = None) -> str:
    expires = int(now if now is not None else time.time()) + SESSION_SECONDS
    payload = f"{expires}.{secrets.token_hex(16)}"
    return f"{payload}.{_sign(settings, payload)}"


def read_session(
    settings: Settings, cookie: str | None, *, now: float | None = None
) -> OperatorSession | None:
    """The session a cookie proves, or None when it is missing, forged or expired."""
    if not cookie:
        return None
    payload, _, signature = cookie.rpartition(".")
    expires_text, _, nonce = payload.partition(".")
    if not (expires_text.isdigit() and nonce):
        return None
    if not hmac.compare_digest(signature.encode(), _sign(settings, payload).encode()):
        return None
    expires = int(expires_text)
    if expires <= (now if now is not None else time.time()):
        return None
    return OperatorSession(nonce=nonce, expires=expires)


def set_session_cookie(response: Response, request: Request, settings: Settings) -> None:
    response.set_cookie(
        COOKIE,
        new_session_cookie(settings),
        max_age=SESSION_SECONDS,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        # Behind TLS (or in prod, where a proxy terminates it) the cookie never travels in clear.
        secure=request.url.scheme == "https" or settings.env == "prod",
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")


async def operator(request: Request) -> OperatorSession:
    """Every admin page's gate: a valid session, else to the login page."""
    session = read_session(state_of(request.app).settings, request.cookies.get(COOKIE))
    if session is not None:
        return session
    login = f"{COOKIE_PATH}/login"
    if request.headers.get("HX-Request"):
        # An htmx swap would paste the login page into a table cell: ask for a full redirect.
        raise HTTPException(status_code=401, headers={"HX-Redirect": login})
    raise HTTPException(status_code=303, headers={"Location": login})


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded form (the only kind the pages send), bounded in size."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise HTTPException(status_code=413)
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def check_csrf(request: Request, session: OperatorSession, form: dict[str, str]) -> None:
    expected = session.csrf_token(state_of(request.app).settings)
    if not hmac.compare_digest(form.get("csrf", "").encode(), expected.encode()):
        raise HTTPException(status_code=403, detail="stale or missing form token: reload the page")


Operator = Annotated[OperatorSession, Depends(operator)]
