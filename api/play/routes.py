"""The players' pages: ``/play`` (sign in, then the lobby) and their static files.

Sign in: in production, paste the bearer token the players' API accepts (from the identity
provider); in dev and test also "sign in as NAME", which mints one with the deployment's
secret and is refused in prod. Either way the token is verified by ``api.auth`` and kept in
the session cookie (``api.play.session``).

A sign-in form is bound to the browser that loaded it (security review 3, S4, login CSRF: a
cross-site form could sign a victim in as the attacker, whose account then got the victim's
wallet): ``GET /play/signin`` sets a random pre-session token in a ``SameSite=Strict``
cookie and writes it in each form; ``POST`` takes the form only when the two match and the
browser does not say the request came from another site (``Sec-Fetch-Site``). A cross-site
POST carries no strict cookie, so it is refused (403) and nobody is signed in.
"""

from __future__ import annotations

import hmac
import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.auth import Caller, valid_user_id, verify_player_token
from api.deps import ID_PATTERN
from api.errors import ApiError
from api.play import lobby as data
from api.play.pages import (
    SIGNIN_COOKIE,
    dev_sign_in_allowed,
    render,
    see_other,
    signed_in,
    signin_form,
    signin_form_from_this_site,
    static_file,
    templates,
)
from api.play.refusals import sentences_json
from api.play.session import clear_player_cookie, cookie_token, csrf_token, set_player_cookie
from api.state import state_of
from api.ui.auth import read_form
from core.tokens import mint_player_token
from db import agents
from db.engine import Database
from db.models import Agent
from domain.settings import validate_settings

router = APIRouter(prefix="/play", tags=["players' pages"], include_in_schema=False)

DEV_SESSION_SECONDS = 12 * 3600
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
ID = re.compile(ID_PATTERN)

# Every page (base.html) carries the refusal sentences for window.sng.refusal.
templates.env.globals["refusal_sentences"] = sentences_json()
templates.env.globals["kind_label"] = data.kind_label
templates.env.filters["percent"] = lambda share: f"{share:g}%"


@router.get("/static/{name}")
async def static(name: str) -> Response:
    return static_file(name)


def _missing(request: Request, caller: Caller, noun: str, ident: str) -> HTMLResponse:
    """The 404 page of a tournament or room that does not exist (or cannot be an id)."""
    return render(
        request, "missing.html", {"noun": noun, "ident": ident}, caller=caller, status_code=404
    )


async def _lists(request: Request) -> dict[str, Any]:
    db = state_of(request.app).db
    filters = data.Filters.parse(request)
    return {
        "filters": filters,
        "tournaments": await data.tournament_cards(db, filters),
        "rooms": await data.room_cards(db, filters),
        "kinds": data.KIND_LABELS,
        "refresh_ms": int(state_of(request.app).settings.admin_refresh_seconds * 1000),
    }


@router.get("", response_class=HTMLResponse)
async def lobby(request: Request) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    context = await _lists(request)
    context["balance"] = await data.balance_of(state_of(request.app).db, caller.owner)
    context["faucet"] = state_of(request.app).settings.env == "dev"
    return render(request, "lobby.html", context, caller=caller)


@router.get("/lobby/lists", response_class=HTMLResponse)
async def lobby_lists(request: Request) -> Response:
    """The lobby's lists alone, for the page's refresh (live counts without a reload)."""
    caller = await signed_in(request)
    if caller is None:
        return Response(status_code=401)
    return render(request, "_lobby_lists.html", await _lists(request), caller=caller)


async def _advisors(db: Database, owner: str, kind: str) -> list[Agent]:
    """What a CoPilot table's Register or Join offers as the advisor: the person's own live
    agents with the skill (none asked for on another kind of table: no read)."""
    if kind != "copilot":
        return []
    return [a for a in await agents.owned_by(db, owner) if "poker:sng" in a.skills]


@router.get("/tournaments/{tournament_id}", response_class=HTMLResponse)
async def tournament_page(request: Request, tournament_id: str) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    db = state_of(request.app).db
    if not ID.fullmatch(tournament_id) or not await data.tournament_exists(db, tournament_id):
        return _missing(request, caller, "tournament", tournament_id)
    t = await data.tournament(request, tournament_id)
    mine = next(
        (e for e in t.entrants if e.player_id == caller.user_id and e.status != "released"), None
    )
    settings = validate_settings(t.settings)
    mtt = settings.max_entrants is not None and settings.max_entrants > settings.seats
    late = t.mtt is not None and t.mtt.late_registration_open and t.state == "playing"
    context = {
        "t": t,
        "mine": mine,
        "mtt": mtt,
        "late_open": late,
        # An MTT's busted entry (its stack stays in the view at 0): re-enter or watch.
        "busted": mtt
        and mine is not None
        and mine.status == "paid"
        and t.stacks.get(mine.player_id) == 0,
        "max_re_entries": settings.max_re_entries,
        "max_entrants": settings.max_entrants,
        "seated": [e for e in t.entrants if e.status != "released"],
        "levels": t.tournament_schedule.levels,
        "places": data.payout_places(settings, t.field_size or t.seats),
        "balance": await data.balance_of(db, caller.owner),
        "chain": t.money_backend == "chain",
        "advisors": await _advisors(db, caller.owner, t.kind),
        "faucet": state_of(request.app).settings.env == "dev",
        "done": request.query_params.get("done", ""),
    }
    return render(request, "tournament.html", context, caller=caller)


@router.get("/tournaments/{tournament_id}/results", response_class=HTMLResponse)
async def results_page(request: Request, tournament_id: str) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    db = state_of(request.app).db
    if not ID.fullmatch(tournament_id) or not await data.tournament_exists(db, tournament_id):
        return _missing(request, caller, "tournament", tournament_id)
    t = await data.tournament(request, tournament_id)
    hands = await data.hand_lines(request, tournament_id, caller.user_id)
    context = {
        "t": t,
        "standings": sorted(t.standings, key=lambda p: (p.rank, p.place)),
        "payouts": {p.player_id: p for p in t.payouts},
        "hands": hands,
        "my_hands": [h for h in hands if h.mine],
        "hand_limit": data.HAND_LIMIT,
    }
    return render(request, "results.html", context, caller=caller)


@router.get("/rooms/{room_id}", response_class=HTMLResponse)
async def room_page(request: Request, room_id: str) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    db = state_of(request.app).db
    room = await data.room(db, room_id) if ID.fullmatch(room_id) else None
    if room is None:
        return _missing(request, caller, "room", room_id)
    mine = next((p for p in room.players if p.handle == f"@{caller.user_id}"), None)
    context = {
        "r": room,
        "mine": mine,
        "advisors": await _advisors(db, caller.owner, room.kind),
        "balance": await data.balance_of(db, caller.owner),
        "faucet": state_of(request.app).settings.env == "dev",
        "done": request.query_params.get("done", ""),
    }
    return render(request, "room.html", context, caller=caller)


@router.get("/signin", response_class=HTMLResponse)
async def signin_page(request: Request) -> Response:
    return signin_form(request, None)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await read_form(request)
    if not signin_form_from_this_site(request, form):
        return signin_form(
            request,
            "This sign-in form is stale or was sent from another site: sign in here again.",
            status_code=403,
        )
    settings = state_of(request.app).settings
    name = form.get("name", "").strip()
    token = form.get("token", "").strip()
    error = None
    if name:
        if not dev_sign_in_allowed(request):
            error = "Signing in by name is for development only: paste your token."
        elif not NAME.fullmatch(name) or valid_user_id(name) is None:
            error = "A name is 1 to 40 letters, digits, dots, dashes or underscores."
        else:
            token = mint_player_token(settings, name, ttl_seconds=DEV_SESSION_SECONDS)
    elif not token:
        error = "Type a name or paste a token."
    if error is None:
        try:
            caller = await verify_player_token(settings, token)
        except ApiError as err:
            error = f"That token was refused: {err.message}"
        else:
            if caller.is_agent:  # pragma: no cover - verify_player_token returns players only
                error = "Agents play over the API, not on these pages."
    if error is not None:
        return signin_form(request, error, status_code=400)
    response: RedirectResponse = see_other("/play")
    set_player_cookie(response, request, token)
    response.delete_cookie(SIGNIN_COOKIE, path="/play/signin", httponly=True, samesite="strict")
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    form = await read_form(request)
    token = cookie_token(request)
    if token is not None and not hmac.compare_digest(
        form.get("csrf", "").encode(), csrf_token(token).encode()
    ):
        return Response("stale or missing form token: reload the page", status_code=403)
    response = see_other("/play/signin")
    clear_player_cookie(response)
    return response
