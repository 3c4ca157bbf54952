"""The players' pages' shared parts: templates, rendering with the security headers, the
signed-in person, static files.

Server-rendered with Jinja2 plus small vendored scripts under ``static/`` (no build step, no
asset from another host: the Content-Security-Policy allows this origin only). The pages are
clients of the public JSON API and the per-player WebSocket, authenticated by the session
cookie (``api.play.session``); they hold no rule of their own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.auth import Caller, verify_player_token
from api.errors import ApiError
from api.guards import addressed_to_loopback, same_origin
from api.play.session import cookie_token, csrf_token
from api.state import state_of
from core.settings import LOOPBACK_NAMES

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["chips"] = lambda n: "—" if n is None else f"{n:,}"
templates.env.filters["utc_ms"] = lambda ms: (
    "—" if ms is None else datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
)

STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none';"
        " form-action 'self'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip")


def dev_sign_in_allowed(request: Request) -> bool:
    """ "Sign in as NAME" mints a token for any name with the deployment's secret, so it is for
    a machine's own stack only (security review 3, S7: any ``SNG_ENV=test`` deployment let
    anyone become anyone): ``dev`` or ``test``, the API bound to loopback, the request from a
    loopback address, addressed to a loopback name, and carrying no proxy's forwarding header
    (a proxy on the same host connects from loopback and may pass any Host on). Never in
    prod."""
    settings = state_of(request.app).settings
    if settings.env not in ("dev", "test") or settings.api_host not in LOOPBACK_NAMES:
        return False
    if any(h in request.headers for h in FORWARDING_HEADERS):
        return False  # through a proxy: whoever is behind it is not on this machine
    client = request.client.host if request.client is not None else ""
    if client not in LOOPBACK_NAMES:
        return False
    return addressed_to_loopback(request.headers.get("host", "").encode())


async def signed_in(request: Request) -> Caller | None:
    """The person the session cookie proves, or None (no cookie, expired, forged, or an agent:
    agents play over the API, not these pages)."""
    token = cookie_token(request)
    if token is None:
        return None
    try:
        caller = await verify_player_token(state_of(request.app).settings, token)
    except ApiError:
        return None
    return None if caller.is_agent else caller


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    caller: Caller | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    token = cookie_token(request)
    context = {
        **context,
        "me": caller.user_id if caller else None,
        "csrf": csrf_token(token) if caller and token else "",
        "env": state_of(request.app).settings.env,
        "dev_sign_in": dev_sign_in_allowed(request),
    }
    response = templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def static_file(name: str) -> Response:
    """A file of ``static/`` by its plain name (no path: nothing outside the folder)."""
    path = HERE / "static" / name
    media_type = STATIC_TYPES.get(path.suffix)
    if "/" in name or name.startswith(".") or media_type is None or not path.is_file():
        return Response(status_code=404)
    return FileResponse(path, media_type=media_type, headers={"Cache-Control": "no-cache"})


# -- the sign-in form (security review 3, S4: login CSRF) ------------------------------------
SIGNIN_COOKIE = "sng_signin"
"""The pre-session nonce whose MAC a sign-in form must carry (double submit, signed)."""
SIGNIN_FORM_SECONDS = 3600
SAME_SITE = {"same-origin", "none"}
"""``Sec-Fetch-Site`` values of a form this site served (``none``: typed or bookmarked)."""


def _form_mac(request: Request, nonce: str) -> str:
    """What the form carries for ``nonce``: a MAC under a key derived from the deployment's
    JWT secret for this use only, so a nonce made up by whoever plants a cookie comes with no
    form that matches. (A pair fetched from this site and planted whole still matches: what
    refuses that is ``Sec-Fetch-Site``, or ``Origin`` where a browser sends no such header.)"""
    secret = state_of(request.app).settings.jwt_secret.get_secret_value().encode()
    key = hmac.new(secret, b"sng-play-signin-form-v1", hashlib.sha256).digest()
    return hmac.new(key, nonce.encode(), hashlib.sha256).hexdigest()


def signin_form(request: Request, error: str | None, status_code: int = 200) -> HTMLResponse:
    """The sign-in page with a fresh pre-session nonce in its cookie and its MAC in its forms."""
    nonce = secrets.token_urlsafe(32)
    response = render(
        request,
        "signin.html",
        {"error": error, "signin_csrf": _form_mac(request, nonce)},
        status_code=status_code,
    )
    response.set_cookie(
        SIGNIN_COOKIE,
        nonce,
        max_age=SIGNIN_FORM_SECONDS,
        path="/play/signin",
        httponly=True,
        samesite="strict",
        # A nonce, not a credential: over plain http (a prod API behind a TLS proxy that
        # forwards http) a Secure cookie would never come back and no form would pass.
        secure=request.url.scheme == "https",
    )
    return response


def signin_form_from_this_site(request: Request, form: dict[str, str]) -> bool:
    """Whether a posted sign-in form is one this site served to this browser: the browser
    does not say it came from elsewhere (``Sec-Fetch-Site``; else ``Origin``, when sent, is
    this host), and it carries the MAC of the nonce in this browser's strict cookie."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in SAME_SITE:
        return False
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if site is None and origin is not None and not same_origin(origin.encode(), host.encode()):
        return False
    nonce = request.cookies.get(SIGNIN_COOKIE, "")
    sent = form.get("csrf", "")
    return bool(nonce) and hmac.compare_digest(_form_mac(request, nonce).encode(), sent.encode())
