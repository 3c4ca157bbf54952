"""The operators' cash-room pages under /ui/rooms: the list, one room, create, close.

They call the JSON API's own functions (``api.routes.rooms``), so they hold no room rule; the
page scaffolding (session, CSRF, rendering) is ``api.ui.routes``'.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlmodel import col, select
from temporalio.client import WorkflowUpdateFailedError

from api.deps import DbDep, SettingsDep, TemporalDep
from api.errors import ApiError
from api.routes.rooms import close_room, get_room, list_rooms, start_room, wire_seat
from api.ui import forms
from api.ui.auth import COOKIE_PATH, Operator, check_csrf, read_form
from api.ui.routes import LIST_LIMIT, _missing, _refusal, _render, _see_other
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
    # The JSON route itself: open rooms unless asked for the closed ones, newest first.
    rooms = await list_rooms(db, "closed" if showing == "closed" else None, LIST_LIMIT)
    return {
        "rooms": rooms,
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
    return _render(request, "rooms.html", context, session=session)


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
    return _render(request, "_room_rows.html", context, session=session)


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
    return _render(request, "room_new.html", _room_form_context(result), session=session)


@router.post("/rooms/preview")
async def room_preview(request: Request, session: Operator) -> HTMLResponse:
    """The room's derived numbers and every field's message, as the form changes (htmx)."""
    result = forms.check_room(await read_form(request))
    return _render(request, "_preview.html", _room_form_context(result), session=session)


@router.post("/rooms/new")
async def create_room(
    request: Request,
    session: Operator,
    temporal: TemporalDep,
    db: DbDep,
    settings: SettingsDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    result = forms.check_room(form)
    if result.body is not None:
        try:
            # The code behind POST /rooms: it validates again and starts the workflow.
            row = await start_room(temporal, db, settings, result.body)
        except DomainError as err:
            forms.room_error(result, err)
        else:
            return _see_other(f"{COOKIE_PATH}/rooms/{row.id}")
    context = _room_form_context(result)
    return _render(request, "room_new.html", context, session=session, status_code=422)


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
        room = await get_room(room_id, db)
    except ApiError as err:
        if err.code != ErrorCode.NOT_FOUND:
            raise
        return _missing(request, session, "room", room_id)
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
    return _render(request, "room.html", context, session=session)


@router.post("/rooms/{room_id}/close")
async def room_close(
    request: Request,
    room_id: str,
    session: Operator,
    db: DbDep,
    temporal: TemporalDep,
) -> Response:
    form = await read_form(request)
    check_csrf(request, session, form)
    page = f"{COOKIE_PATH}/rooms/{room_id}"
    try:
        # The JSON route itself (POST /rooms/{id}/close): closed already answers "closed".
        result = await close_room(room_id, db, temporal)
    except (DomainError, ApiError, WorkflowUpdateFailedError) as err:
        return _see_other(f"{page}?{urlencode({'error': f'Close refused: {_refusal(err)}'})}")
    if result.status == "closing":
        return _see_other(f"{page}?closing=1")
    return _see_other(page)
