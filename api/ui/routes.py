"""The operators' admin pages under /ui: login; tournaments (list, one, create, force-end).
The cash rooms' pages are in ``api.ui.rooms``.

Server-rendered with Jinja2; htmx (vendored in ``static/``) refreshes the lists and the
create forms' previews. Every page needs an operator session (``api.ui.auth``); actions go
through the same functions as the JSON admin API, so the pages hold no rule of their own.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from sqlmodel import col, select
from temporalio.client import WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from api.deps import DbDep, SettingsDep, TournamentId
from api.errors import ApiError
from api.health import task_trouble
from api.ratelimit import address_key
from api.services import tournaments
from api.services.tournaments import current_level_started_at_ms
from api.state import AppState, AppStateDep, state_of
from api.ui import forms
from api.ui.auth import (
    COOKIE_PATH,
    Operator,
    admin_key_matches,
    check_csrf,
    clear_session_cookie,
    read_form,
    set_session_cookie,
)
from api.ui.mtt import mtt_page
from api.ui.pages import HERE, LIST_LIMIT, age, missing, refusal, render, see_other
from db.models import Tournament
from domain.errors import DomainError
from domain.operations import can_force_end
from domain.schedule import schedule_preview
from domain.settings import validate_settings
from wire.ids import tournament_workflow_id
from wire.messages import TournamentView

STATIC = {"htmx.min.js": "text/javascript", "admin.css": "text/css"}
LADDER_BEFORE, LADDER_LEVELS = 2, 12

router = APIRouter(prefix=COOKIE_PATH, tags=["admin pages"], include_in_schema=False)


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
    return see_other(f"{COOKIE_PATH}/tournaments")


@router.get("/login")
async def login_page(request: Request) -> HTMLResponse:
    return render(request, "login.html", {"error": None})


LOGIN_ATTEMPTS = parse("10/minute")
"""Wrong admin-key attempts per client address (security review L6): guessing stays slow."""


@router.post("/login")
async def login(request: Request, settings: SettingsDep) -> Response:
    address = address_key(request.client.host if request.client else "unknown")
    limiter: MovingWindowRateLimiter = state_of(request.app).login_limiter
    if not await limiter.test(LOGIN_ATTEMPTS, address):
        return render(
            request,
            "login.html",
            {"error": "Too many wrong keys from here: wait a minute."},
            status_code=429,
        )
    form = await read_form(request)
    if not admin_key_matches(settings, form.get("serviceKey", "")):
        await limiter.hit(LOGIN_ATTEMPTS, address)  # only wrong keys count
        return render(
            request, "login.html", {"error": "That is not the admin key."}, status_code=401
        )
    response = see_other(f"{COOKIE_PATH}/tournaments")
    set_session_cookie(response, request, settings)
    return response


@router.post("/logout")
async def logout(request: Request, session: Operator) -> Response:
    check_csrf(request, session, await read_form(request))
    response = see_other(f"{COOKIE_PATH}/login")
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
    return render(request, "list.html", context, session=session)


@router.get("/tournaments/rows")
async def tournament_rows(
    request: Request, session: Operator, db: DbDep, settings: SettingsDep
) -> HTMLResponse:
    """The list's table alone: what the page swaps in every refresh."""
    context = await _list_context(db)
    context["refresh_seconds"] = f"{settings.admin_refresh_seconds:g}"
    return render(request, "_rows.html", context, session=session)


@router.get("/tournaments/new")
async def new_form(request: Request, session: Operator) -> HTMLResponse:
    result = forms.check(forms.defaults())
    return render(request, "new.html", _form_context(result), session=session)


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
    return render(request, "_preview.html", _form_context(result), session=session)


@router.post("/tournaments/new")
async def create(request: Request, session: Operator, state: AppStateDep) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    result = forms.check(form)
    if result.errors or result.body is None:
        return render(request, "new.html", _form_context(result), session=session, status_code=422)
    body = result.body
    created = await tournaments.start(state, body)
    return see_other(f"{COOKIE_PATH}/tournaments/{created.tournament_id}")


async def _view(state: AppState, tournament_id: str) -> TournamentView | None:
    """The tournament's view as the public record reads it (the read model's, where it is
    the workflow's own); None: no such tournament."""
    try:
        return await tournaments.current_view(state, tournament_id)
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
    state: AppStateDep,
    error: str | None = None,
) -> HTMLResponse:
    temporal, settings = state.temporal, state.settings
    workflow_url = (
        f"{settings.temporal_ui_url.rstrip('/')}/namespaces/{settings.temporal_namespace}"
        f"/workflows/{tournament_workflow_id(tournament_id)}"
    )
    trouble = await task_trouble(temporal, tournament_workflow_id(tournament_id))
    try:
        view = await _view(state, tournament_id)
    except (WorkflowQueryFailedError, RPCError):
        # A history its workers cannot replay, or no worker answering: the page still says
        # what Temporal knows, and what to do.
        page: dict[str, Any] = {
            "tournament_id": tournament_id,
            "workflow_url": workflow_url,
            "troubles": [trouble] if trouble else [],
        }
        return render(request, "wedged.html", page, session=session, status_code=503)
    if view is None:
        return missing(request, session, "tournament", tournament_id)
    troubles = [trouble] if trouble else []
    if view.table_workflow_id and (table := await task_trouble(temporal, view.table_workflow_id)):
        troubles.append(table)
    intents = await tournaments.payout_intents(state.db, tournament_id)
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
        "force_end_after": age(view.force_end_min_level_age_seconds),
        "workflow_url": workflow_url,
        "seats": sorted(
            (e for e in view.entrants if e.status.value != "released"),
            key=lambda e: (e.seat is None, e.seat or 0, e.player_id),
        ),
        "settings_rows": _flatten(view.settings),
        "error": error,
        "mtt": await mtt_page(state.db, view),
    }
    return render(request, "detail.html", context, session=session)


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
    state: AppStateDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    try:
        # The JSON route's service, and so the workflow's rule (playing, level old enough).
        await tournaments.force_end(state, tournament_id, "force-ended from the admin pages")
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        # WorkflowUpdateFailedError: the workflow's own check (the state moved on between the
        # read and the update).
        refused = refusal(err)
    else:
        return see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}")
    query = urlencode({"error": f"Force-end refused: {refused}"})
    return see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}?{query}")


@router.post("/tournaments/{tournament_id}/retry-payouts")
async def retry_refused_payouts(
    request: Request, tournament_id: TournamentId, session: Operator, state: AppStateDep
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    try:
        await tournaments.retry_payouts(state, tournament_id)  # the JSON route's: one rule
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        query = urlencode({"error": f"Retry refused: {refusal(err)}"})
        return see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}?{query}")
    return see_other(f"{COOKIE_PATH}/tournaments/{tournament_id}")
