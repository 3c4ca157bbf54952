"""The players' pages' shared parts: templates, rendering with the security headers, the
signed-in person, static files.

Server-rendered with Jinja2 plus small vendored scripts under ``static/`` (no build step, no
asset from another host: the Content-Security-Policy allows this origin only). The pages are
clients of the public JSON API and the per-player WebSocket, authenticated by the session
cookie (``api.play.session``); they hold no rule of their own.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.auth import Caller, verify_player_token
from api.errors import ApiError
from api.play.session import cookie_token, csrf_token
from api.state import state_of

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


def dev_sign_in_allowed(request: Request) -> bool:
    """ "Sign in as NAME" mints a token with the deployment's secret: dev and test only."""
    return bool(state_of(request.app).settings.env != "prod")


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
