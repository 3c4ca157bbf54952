"""The operators' cash-room pages under /ui/rooms: the list, one room, create, close.

They call the rooms service the JSON API calls (``api.services.rooms``), so they hold no room
rule; the page scaffolding (rendering, redirects) is ``api.ui.pages``', the session and CSRF
``api.ui.auth``'s.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlmodel import col, select
from temporalio.client import WorkflowUpdateFailedError

from api.deps import DbDep, SettingsDep
from api.errors import ApiError
from api.services import rooms
from api.services.rooms import wire_seat
from api.state import AppStateDep
from api.ui import forms
from api.ui.auth import COOKIE_PATH, Operator, check_csrf, read_form
from api.ui.pages import LIST_LIMIT, missing, refusal, render, see_other
from db.models import Hand
from domain.errors import DomainError, ErrorCode
from wire.ids import room_workflow_id

ROOM_HANDS = 20
"""How many of a room's latest hands its page lists."""

router = APIRouter(prefix=COOKIE_PATH, tags=["admin pages"], include_in_schema=False)


def _room_filter(status: str | None) -> str:
    """``closed`` lists the closed rooms; anything else the open ones (the default)."""
    return "closed" if status == "closed" else "open"


async def _room_list_context(
    db: DbDep, settings: SettingsDep, status: str | None
) -> dict[str, Any]:
    showing = _room_filter(status)
    # The JSON route's service: open rooms unless asked for the closed ones, newest first.
    listed = await rooms.list_rooms(db, "closed" if showing == "closed" else None, LIST_LIMIT)
    return {
        "rooms": listed,
        "showing": showing,
        "now": datetime.now(UTC),
        "limit": LIST_LIMIT,
        "refresh_seconds": f"{settings.admin_refresh_seconds:g}",
    }


@router.get("/rooms")
async def room_list(
    request: Request,
    session: Operator,
    db: DbDep,
    settings: SettingsDep,
    status: str | None = None,
) -> HTMLResponse:
    context = await _room_list_context(db, settings, status)
    return render(request, "rooms.html", context, session=session)


@router.get("/rooms/rows")
async def room_rows(
    request: Request,
    session: Operator,
    db: DbDep,
    settings: SettingsDep,
    status: str | None = None,
) -> HTMLResponse:
    """The room list's table alone: what the page swaps in every refresh."""
    context = await _room_list_context(db, settings, status)
    return render(request, "_room_rows.html", context, session=session)


def _room_form_context(result: forms.RoomFormResult) -> dict[str, Any]:
    preview = forms.room_preview(result.rules) if result.rules is not None else None
    return {
        "fields": forms.ROOM_FIELDS,
        "result": result,
        "preview": preview,
        "preview_body": "_room_preview_body.html",
    }


@router.get("/rooms/new")
async def new_room_form(request: Request, session: Operator) -> HTMLResponse:
    result = forms.check_room(forms.room_defaults())
    return render(request, "room_new.html", _room_form_context(result), session=session)


@router.post("/rooms/preview")
async def room_preview(request: Request, session: Operator) -> HTMLResponse:
    """The room's derived numbers and every field's message, as the form changes (htmx)."""
    result = forms.check_room(await read_form(request))
    return render(request, "_preview.html", _room_form_context(result), session=session)


@router.post("/rooms/new")
async def create_room(
    request: Request,
    session: Operator,
    state: AppStateDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    result = forms.check_room(form)
    if result.body is not None:
        try:
            # The service behind POST /rooms: it validates again and starts the workflow.
            row = await rooms.start(state, result.body)
        except DomainError as err:
            forms.room_error(result, err)
        else:
            return see_other(f"{COOKIE_PATH}/rooms/{row.id}")
    context = _room_form_context(result)
    return render(request, "room_new.html", context, session=session, status_code=422)


async def _room_hands(db: DbDep, room_id: str) -> list[dict[str, Any]]:
    """The room's latest finished hands, newest first: number, board and settlement."""
    async with db.session() as s:
        hands = (
            await s.exec(
                select(Hand)
                .where(Hand.table_id == room_workflow_id(room_id))
                .order_by(col(Hand.hand_no).desc())
                .limit(ROOM_HANDS)
            )
        ).all()
    out = []
    for h in hands:
        settlement = h.record.get("settlement", {})
        players = h.record.get("players", {})
        net = sorted(
            (int(seat), chips) for seat, chips in settlement.get("netToWinner", {}).items()
        )
        out.append(
            {
                "hand_number": h.hand_no,
                "board": list(h.record.get("board", [])),
                "gross_pot": settlement.get("grossPot", 0),
                # (seat, handle, chips): who took how much from the pots; seats from 1, as
                # the room record numbers them.
                "net_to_winner": [
                    (wire_seat(seat), players.get(str(seat)), chips) for seat, chips in net
                ],
            }
        )
    return out


@router.get("/rooms/{room_id}")
async def room_page(
    request: Request,
    room_id: str,
    session: Operator,
    db: DbDep,
    settings: SettingsDep,
    error: str | None = None,
    closing: str | None = None,
) -> HTMLResponse:
    try:
        room = await rooms.get(db, room_id)
    except ApiError as err:
        if err.code != ErrorCode.NOT_FOUND:
            raise
        return missing(request, session, "room", room_id)
    workflow_url = (
        f"{settings.temporal_ui_url.rstrip('/')}/namespaces/{settings.temporal_namespace}"
        f"/workflows/{room_workflow_id(room_id)}"
    )
    closed = room.status == "closed"
    context: dict[str, Any] = {
        "r": room,
        # The read model knows no "closing": the close's own answer, passed by the redirect.
        "state": "closing" if closing and not closed else room.status,
        "closed": closed,
        "players": sorted(room.players, key=lambda p: p.seat),
        "hands": await _room_hands(db, room_id),
        "hands_limit": ROOM_HANDS,
        "workflow_url": workflow_url,
        "workflow_id": room_workflow_id(room_id),
        "error": error,
    }
    return render(request, "room.html", context, session=session)


@router.post("/rooms/{room_id}/close")
async def room_close(
    request: Request,
    room_id: str,
    session: Operator,
    state: AppStateDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    page = f"{COOKIE_PATH}/rooms/{room_id}"
    try:
        # The JSON route's service (POST /rooms/{id}/close): closed already answers "closed".
        result = await rooms.close(state, room_id)
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        return see_other(f"{page}?{urlencode({'error': f'Close refused: {refusal(err)}'})}")
    if result.status == "closing":
        return see_other(f"{page}?closing=1")
    return see_other(page)
