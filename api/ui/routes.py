"""The operators' admin pages under /ui: login; tournaments (list, one, create, force-end).
The cash rooms' pages are in ``api.ui.rooms``.

Server-rendered with Jinja2; htmx (vendored in ``static/``) refreshes the lists and the
create forms' previews. Every page needs an operator session (``api.ui.auth``); actions go
through the same functions as the JSON admin API, so the pages hold no rule of their own.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from sqlmodel import col, select
from temporalio.client import WorkflowHandle, WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from api.deps import DbDep, SettingsDep, TemporalDep, TournamentId
from api.errors import QUERY_TIMEOUT, ApiError
from api.health import task_trouble
from api.ratelimit import address_key
from api.routes.admin import (
    ForceEndBody,
    current_level_started_at_ms,
    force_end_tournament,
    retry_payouts,
    start_tournament,
)
from api.state import state_of
from api.ui import forms
from api.ui.auth import (
    COOKIE_PATH,
    Operator,
    OperatorSession,
    admin_key_matches,
    check_csrf,
    clear_session_cookie,
    read_form,
    set_session_cookie,
)
from db.models import PayoutIntent, Tournament
from domain.errors import DomainError
from domain.operations import can_force_end
from domain.schedule import schedule_preview
from domain.settings import validate_settings
from wire.ids import tournament_workflow_id
from wire.messages import TournamentView
from workflows.tournament import TournamentWorkflow

HERE = Path(__file__).parent
STATIC = {"htmx.min.js": "text/javascript", "admin.css": "text/css"}
LIST_LIMIT = 200
LADDER_BEFORE, LADDER_LEVELS = 2, 12

router = APIRouter(prefix=COOKIE_PATH, tags=["admin pages"], include_in_schema=False)
templates = Jinja2Templates(directory=HERE / "templates")


def _age(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172_800:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86_400}d"


def _utc_ms(ms: int | None) -> str:
    if ms is None:
        return "—"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


templates.env.filters["age"] = _age
templates.env.filters["utc_ms"] = _utc_ms
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


def _render(
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


def _see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _missing(request: Request, session: OperatorSession, noun: str, ident: str) -> HTMLResponse:
    """The 404 page of a tournament or room that does not exist."""
    context = {"noun": noun, "ident": ident, "back": f"{COOKIE_PATH}/{noun}s"}
    return _render(request, "missing.html", context, session=session, status_code=404)


def _refusal(err: Exception) -> str:
    """The message of a refused action: coded errors, and the workflow's own update check."""
    if isinstance(err, DomainError | ApiError):
        return err.message
    if isinstance(err, WorkflowUpdateFailedError) and isinstance(err.cause, ApplicationError):
        return err.cause.message
    return str(err)


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        return Response(status_code=404)
    return FileResponse(
        HERE / "static" / name,
        media_type=STATIC[name],
        headers={"Cache-Control": "public, max-age=3600"},
    )


@router.get("")
async def home() -> RedirectResponse:
    return _see_other(f"{COOKIE_PATH}/tournaments")


@router.get("/login")
async def login_page(request: Request) -> HTMLResponse:
    return _render(request, "login.html", {"error": None})


LOGIN_ATTEMPTS = parse("10/minute")
"""Wrong admin-key attempts per client address (security review L6): guessing stays slow."""


@router.post("/login")
async def login(request: Request, settings: SettingsDep) -> Response:
    address = address_key(request.client.host if request.client else "unknown")
    limiter: MovingWindowRateLimiter = state_of(request.app).login_limiter
    if not await limiter.test(LOGIN_ATTEMPTS, address):
        return _render(
            request,
            "login.html",
            {"error": "Too many wrong keys from here: wait a minute."},
            status_code=429,
        )
    form = await read_form(request)
    if not admin_key_matches(settings, form.get("serviceKey", "")):
        await limiter.hit(LOGIN_ATTEMPTS, address)  # only wrong keys count
        return _render(
            request, "login.html", {"error": "That is not the admin key."}, status_code=401
        )
    response = _see_other(f"{COOKIE_PATH}/tournaments")
    set_session_cookie(response, request, settings)
    return response


@router.post("/logout")
async def logout(request: Request, session: Operator) -> Response:
    check_csrf(request, session, await read_form(request))
    response = _see_other(f"{COOKIE_PATH}/login")
    clear_session_cookie(response)
    return response


async def _list_context(db: DbDep) -> dict[str, Any]:
    async with db.session() as s:
        rows = (
            await s.exec(
                select(Tournament).order_by(col(Tournament.created_at).desc()).limit(LIST_LIMIT)
            )
        ).all()
    return {"tournaments": rows, "now": datetime.now(UTC), "limit": LIST_LIMIT}


@router.get("/tournaments")
async def tournament_list(
    request: Request, session: Operator, db: DbDep, settings: SettingsDep
) -> HTMLResponse:
    context = await _list_context(db)
    context["refresh_seconds"] = f"{settings.admin_refresh_seconds:g}"
    return _render(request, "list.html", context, session=session)


@router.get("/tournaments/rows")
async def tournament_rows(
    request: Request, session: Operator, db: DbDep, settings: SettingsDep
) -> HTMLResponse:
    """The list's table alone: what the page swaps in every refresh."""
    context = await _list_context(db)
    context["refresh_seconds"] = f"{settings.admin_refresh_seconds:g}"
    return _render(request, "_rows.html", context, session=session)


@router.get("/tournaments/new")
async def new_form(request: Request, session: Operator) -> HTMLResponse:
    result = forms.check(forms.defaults())
    return _render(request, "new.html", _form_context(result), session=session)


def _form_context(result: forms.FormResult) -> dict[str, Any]:
    preview = None
    if result.parsed is not None:
        try:
            preview = forms.previews(result.parsed)
        except DomainError as err:
            result.errors.setdefault("", err.message)
    return {"fields": forms.FIELDS, "result": result, "preview": preview}


@router.post("/tournaments/preview")
async def preview(request: Request, session: Operator) -> HTMLResponse:
    """The previews and every field's message, as the form changes (htmx)."""
    result = forms.check(await read_form(request))
    return _render(request, "_preview.html", _form_context(result), session=session)


@router.post("/tournaments/new")
async def create(
    request: Request, session: Operator, temporal: TemporalDep, settings: SettingsDep, db: DbDep
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    result = forms.check(form)
    if result.errors or result.body is None:
        return _render(request, "new.html", _form_context(result), session=session, status_code=422)
    body = result.body
    created = await start_tournament(
        temporal,
        settings,
        name=body.name,
        raw=body.settings,
        hand_pause_ms=body.hand_pause_ms,
        db=db,
    )
    return _see_other(f"{COOKIE_PATH}/tournaments/{created.tournament_id}")


async def _view(temporal: TemporalDep, tournament_id: str) -> TournamentView | None:
    handle: WorkflowHandle[Any, Any] = temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )
    try:
        return await handle.query(TournamentWorkflow.state, rpc_timeout=QUERY_TIMEOUT)
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            return None
        raise


def _ladder(view: TournamentView) -> list[Any]:
    settings = validate_settings(view.settings)
    return schedule_preview(
        settings,
        from_level=max(0, view.current_level - LADDER_BEFORE),
        count=LADDER_LEVELS,
        play_start_ms=view.play_start_ms,
    ).levels


@router.get("/tournaments/{tournament_id}")
async def tournament_page(
    request: Request,
    tournament_id: str,
    session: Operator,
    temporal: TemporalDep,
    db: DbDep,
    settings: SettingsDep,
    error: str | None = None,
) -> HTMLResponse:
    workflow_url = (
        f"{settings.temporal_ui_url.rstrip('/')}/namespaces/{settings.temporal_namespace}"
        f"/workflows/{tournament_workflow_id(tournament_id)}"
    )
    trouble = await task_trouble(temporal, tournament_workflow_id(tournament_id))
    try:
        view = await _view(temporal, tournament_id)
    except (WorkflowQueryFailedError, RPCError):
        # A history its workers cannot replay, or no worker answering: the page still says
        # what Temporal knows, and what to do.
        page: dict[str, Any] = {
            "tournament_id": tournament_id,
            "workflow_url": workflow_url,
            "troubles": [trouble] if trouble else [],
        }
        return _render(request, "wedged.html", page, session=session, status_code=503)
    if view is None:
        return _missing(request, session, "tournament", tournament_id)
    troubles = [trouble] if trouble else []
    if view.table_workflow_id and (table := await task_trouble(temporal, view.table_workflow_id)):
        troubles.append(table)
    async with db.session() as s:
        intents = (
            await s.exec(
                select(PayoutIntent)
                .where(PayoutIntent.tournament_id == tournament_id)
                .order_by(col(PayoutIntent.position))
            )
        ).all()
    level_started = current_level_started_at_ms(view)
    now_ms = int(time.time() * 1000)
    context: dict[str, Any] = {
        "troubles": troubles,
        "t": view,
        "intents": {i.position: i for i in intents},
        "ladder": _ladder(view),
        "level_started_ms": level_started,
        "level_age": None if level_started is None else (now_ms - level_started) / 1000,
        "can_force_end": can_force_end(
            view.state.value,
            level_started,
            now_ms,
            min_level_age_ms=view.force_end_min_level_age_seconds * 1000,
        ),
        "force_end_after": _age(view.force_end_min_level_age_seconds),
        "workflow_url": workflow_url,
        "seats": sorted(
            (e for e in view.entrants if e.status.value != "released"),
            key=lambda e: (e.seat is None, e.seat or 0, e.player_id),
        ),
        "settings_rows": _flatten(view.settings),
        "error": error,
    }
    return _render(request, "detail.html", context, session=session)


def _flatten(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """Settings as (wire path, value) rows: ``blindStructure.increaseFactor`` → 1.5."""
    if isinstance(value, dict):
        return [
            row
            for key, inner in value.items()
            for row in _flatten(inner, f"{path}.{key}" if path else str(key))
        ]
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [row for i, inner in enumerate(value) for row in _flatten(inner, f"{path}[{i}]")]
    return [(path, value)]


@router.post("/tournaments/{tournament_id}/force-end")
async def force_end(
    request: Request,
    tournament_id: TournamentId,
    session: Operator,
    temporal: TemporalDep,
    settings: SettingsDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    try:
        # The JSON route itself, and so the workflow's rule (playing, level old enough).
        await force_end_tournament(
            ForceEndBody(table_id=tournament_id, reason="force-ended from the admin pages"),
            temporal,
        )
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        # WorkflowUpdateFailedError: the workflow's own check (the state moved on between the
        # read and the update).
        refusal = _refusal(err)
    else:
        return _see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}")
    query = urlencode({"error": f"Force-end refused: {refusal}"})
    return _see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}?{query}")


@router.post("/tournaments/{tournament_id}/retry-payouts")
async def retry_refused_payouts(
    request: Request, tournament_id: TournamentId, session: Operator, temporal: TemporalDep
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    try:
        await retry_payouts(tournament_id, temporal)  # the JSON route: the same rule
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        query = urlencode({"error": f"Retry refused: {_refusal(err)}"})
        return _see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}?{query}")
    return _see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}")
