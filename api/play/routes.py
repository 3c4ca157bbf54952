"""The players' pages: ``/play`` (sign in, then the lobby) and their static files.

Sign in: in production, paste the bearer token the players' API accepts (from the identity
provider); in dev and test also "sign in as NAME", which mints one with the deployment's
secret and is refused in prod. Either way the token is verified by ``api.auth`` and kept in
the session cookie (``api.play.session``).
"""

from __future__ import annotations

import hmac
import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.auth import valid_user_id, verify_player_token
from api.errors import ApiError
from api.play.pages import dev_sign_in_allowed, render, see_other, signed_in, static_file
from api.play.session import clear_player_cookie, cookie_token, csrf_token, set_player_cookie
from api.ui.auth import read_form
from core.tokens import mint_player_token

router = APIRouter(prefix="/play", tags=["players' pages"], include_in_schema=False)

DEV_SESSION_SECONDS = 12 * 3600
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


@router.get("/static/{name}")
async def static(name: str) -> Response:
    return static_file(name)


@router.get("", response_class=HTMLResponse)
async def lobby(request: Request) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    return render(request, "lobby.html", {}, caller=caller)


@router.get("/signin", response_class=HTMLResponse)
async def signin_page(request: Request) -> Response:
    return render(request, "signin.html", {"error": None})


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await read_form(request)
    settings = request.app.state.settings
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
        return render(request, "signin.html", {"error": error}, status_code=400)
    response: RedirectResponse = see_other("/play")
    set_player_cookie(response, request, token)
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
