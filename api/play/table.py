"""The table page: ``/play/tournaments/{id}/table`` and ``/play/rooms/{id}/table``.

The server renders the shell only (who you are, which table, which stream to open); every
live thing on the page arrives over a stream (``static/table.js``):

- a seated person (a tournament's entrant, a room's player) gets their own per-player
  WebSocket (``/tournaments/{id}/me/ws``, ``/rooms/{id}/me/ws``, authenticated by the session
  cookie): game states, ``action_required``, the public events, ``advice``; they act on it;
- anyone else is an observer: the public stream only (a tournament's ``/events`` SSE, a
  room's ``/stream`` WebSocket) and the public game state read again after each of its
  events (a spectator's: no hole cards but those shown down). The page never polls.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlmodel import select

from api.auth import Caller
from api.deps import ID_PATTERN
from api.play.pages import render, signed_in
from api.state import state_of
from db.models import Entrant, Room, Tournament
from wire.messages import EntrantStatus

router = APIRouter(prefix="/play", tags=["players' pages"], include_in_schema=False)

VALID_ID = re.compile(ID_PATTERN)
OVER = frozenset({"ended", "settling", "closed", "cancelled"})
"""A tournament in these states has its results: the page links to them."""


@router.get("/tournaments/{tournament_id}/table", response_class=HTMLResponse)
async def tournament_table(tournament_id: str, request: Request) -> Response:
    caller = await signed_in(request)
    row: Tournament | None = None
    seated = False
    if VALID_ID.fullmatch(tournament_id):
        async with state_of(request.app).db.session() as session:
            row = await session.get(Tournament, tournament_id)
            if row is not None and caller is not None:
                entrant = (
                    await session.exec(
                        select(Entrant).where(
                            Entrant.tournament_id == tournament_id,
                            Entrant.player_id == caller.user_id,
                        )
                    )
                ).first()
                seated = entrant is not None and entrant.status != EntrantStatus.RELEASED
    if row is None:
        return _missing(request, caller, "tournament", tournament_id)
    base = f"/tournaments/{tournament_id}"
    return _page(
        request,
        caller,
        {
            "kind": "tournament",
            "table_id": tournament_id,
            "name": row.name,
            "mode": "player" if seated else "observer",
            "socket": f"{base}/me/ws" if seated else "",
            "public": f"{base}/events",
            "state": f"{base}/game-state",
            "sit_in": f"{base}/sit-in",
            "back": f"/play{base}",
            "back_label": "Back to the tournament",
            "results": f"/play{base}/results",
            "over": row.state in OVER,
        },
    )


@router.get("/rooms/{room_id}/table", response_class=HTMLResponse)
async def room_table(room_id: str, request: Request) -> Response:
    caller = await signed_in(request)
    row: Room | None = None
    if VALID_ID.fullmatch(room_id):
        async with state_of(request.app).db.session() as session:
            row = await session.get(Room, room_id)
    if row is None:
        return _missing(request, caller, "room", room_id)
    seated = caller is not None and any(p.get("handle") == caller.user_id for p in row.players)
    base = f"/rooms/{room_id}"
    return _page(
        request,
        caller,
        {
            "kind": "room",
            "table_id": room_id,
            "name": row.name,
            "mode": "player" if seated else "observer",
            "socket": f"{base}/me/ws" if seated else "",
            "public": f"{base}/stream",
            "state": f"{base}/game-state",
            "sit_in": f"{base}/sit-in",
            "back": f"/play{base}",
            "back_label": "Back to the room",
            "results": "",
            "over": row.status == "closed",
        },
    )


def _page(request: Request, caller: Caller | None, table: dict[str, Any]) -> Response:
    return render(request, "table.html", {"table": table, "missing": None}, caller=caller)


def _missing(request: Request, caller: Caller | None, kind: str, table_id: str) -> Response:
    return render(
        request,
        "table.html",
        {"table": None, "missing": {"kind": kind, "id": table_id}},
        caller=caller,
        status_code=404,
    )
