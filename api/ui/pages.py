"""The admin pages' scaffolding, shared by the tournaments' pages (``api.ui.routes``) and the
cash rooms' (``api.ui.rooms``): the templates and their filters, the security headers, and
rendering, redirects, the 404 page and a refusal's message. No page here: the page modules
never import each other (import-linter)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from api.errors import ApiError
from api.state import state_of
from api.ui.auth import COOKIE_PATH, OperatorSession
from domain.errors import DomainError

HERE = Path(__file__).parent
LIST_LIMIT = 200
templates = Jinja2Templates(directory=HERE / "templates")


def age(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172_800:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86_400}d"


def utc_ms(ms: int | None) -> str:
    if ms is None:
        return "—"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


templates.env.filters["age"] = age
templates.env.filters["utc_ms"] = utc_ms
templates.env.filters["chips"] = lambda n: "—" if n is None else f"{n:,}"

# The pages need nothing from elsewhere; refusing everything else (and framing) means an
# injected script or a clickjacking overlay over the force-end button has nowhere to go.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    session: OperatorSession | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    settings = state_of(request.app).settings
    context = {
        **context,
        "csrf": session.csrf_token(settings) if session else "",
        "logged_in": session is not None,
        "env": settings.env,
    }
    response = templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def missing(request: Request, session: OperatorSession, noun: str, ident: str) -> HTMLResponse:
    """The 404 page of a tournament or room that does not exist."""
    context = {"noun": noun, "ident": ident, "back": f"{COOKIE_PATH}/{noun}s"}
    return render(request, "missing.html", context, session=session, status_code=404)


def refusal(err: Exception) -> str:
    """The message of a refused action: coded errors, and the workflow's own update check."""
    if isinstance(err, DomainError | ApiError):
        return err.message
    if isinstance(err, WorkflowUpdateFailedError) and isinstance(err.cause, ApplicationError):
        return err.cause.message
    return str(err)
