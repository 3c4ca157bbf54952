"""Signing in on the players' pages with the identity provider (OIDC), when the settings name
one (``SNG_OIDC_CLIENT_ID``; docs/play.md, "Signing in with your identity provider").

The authorization code flow with PKCE (S256), the API as the client:

- ``GET /play/oidc/start`` draws ``state``, ``nonce`` and the PKCE verifier, keeps them in a
  short-lived signed cookie (``HttpOnly``, ``SameSite=Lax``: the IdP's redirect back is a
  cross-site top-level GET, which Lax lets through and Strict would not; ``Path=/play/oidc``)
  and redirects to the IdP's authorization endpoint (from its discovery document).
- ``GET /play/oidc/callback?code&state`` checks the state against that cookie, exchanges the
  code at the token endpoint (with the verifier, and the client secret when there is one),
  verifies the ID token against the IdP's keys (issuer, audience = the client id, exp, nonce;
  ``api.auth``'s algorithm list), and keeps that very token as the person's session
  (``api.play.session``): the issuer is ``jwt_issuer`` and the keys ``jwt_jwks_url``, so it is a
  token the players' API accepts, and nothing else is stored anywhere.

Every failure answers the sign-in page with a sentence, 400 for an answer that does not hold
(the IdP's ``error``, a state that is not this browser's, an expired or missing flow, a refused
exchange, a token that does not verify) and 502 when the IdP cannot be reached; it sets no
session.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx
import jwt
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.applications import Starlette

from api.auth import JWKS_ALGORITHMS, _jwks_client, verify_player_token
from api.errors import ApiError
from api.play.pages import render, signin_form, templates
from api.play.session import set_player_cookie
from api.state import state_of
from core.settings import LOOPBACK_NAMES, OIDC_CALLBACK_PATH, Settings

log = logging.getLogger(__name__)

router = APIRouter(prefix="/play/oidc", tags=["players' pages"], include_in_schema=False)

FLOW_COOKIE = "sng_oidc_flow"
FLOW_PATH = "/play/oidc"
FLOW_SECONDS = 600
"""How long a person may take at the IdP between "Sign in with ..." and coming back."""
DISCOVERY_SECONDS = 3600.0
HTTP_TIMEOUT = 10.0
ERROR_CODE = re.compile(r"^[a-z_]{1,64}$")


class SignInFailed(Exception):
    """A sentence for the person, and the page's status."""

    def __init__(self, sentence: str, status_code: int = 400) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.status_code = status_code


# -- the IdP's discovery document, cached per issuer ---------------------------------------------
@dataclass(frozen=True)
class Provider:
    authorization_endpoint: str
    token_endpoint: str
    secret_by_post: bool
    """Whether the IdP takes the client secret in the form only (not HTTP Basic)."""


_discovered: dict[str, tuple[Provider, float]] = {}


def provider_name(settings: Settings) -> str:
    return settings.oidc_provider_name or urlsplit(settings.jwt_issuer).hostname or "your IdP"


def sign_in_label(settings: Settings) -> str | None:
    """The sign-in page's button ("Sign in with ..."), or None when OIDC sign-in is off."""
    return f"Sign in with {provider_name(settings)}" if settings.oidc_client_id else None


def _sign_in_label_of(app: Starlette) -> str | None:
    """``sign_in_label`` for the app's settings (what the sign-in template calls)."""
    return sign_in_label(state_of(app).settings)


templates.env.globals["oidc_sign_in_label"] = _sign_in_label_of


def _endpoint(document: dict[str, Any], name: str, settings: Settings) -> str:
    value = document.get(name)
    parts = urlsplit(value) if isinstance(value, str) else None
    prod = settings.env == "prod"
    if parts is None or parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"its {name} is not a URL")
    if parts.scheme == "http" and (prod or parts.hostname not in LOOPBACK_NAMES):
        raise ValueError(f"its {name} is not https")
    return str(value)


async def discover(settings: Settings) -> Provider:
    """The IdP's endpoints from ``<issuer>/.well-known/openid-configuration`` (an hour)."""
    issuer = settings.jwt_issuer
    cached = _discovered.get(issuer)
    if cached is not None and time.monotonic() < cached[1]:
        return cached[0]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    name = provider_name(settings)
    try:
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
            answer = await http.get(url, headers={"Accept": "application/json"})
        answer.raise_for_status()
        document = answer.json()
        if not isinstance(document, dict):
            raise ValueError("it is not a JSON object")
        if document.get("issuer") != issuer:
            raise ValueError(f"it names the issuer {document.get('issuer')!r}, not {issuer!r}")
        methods = document.get("token_endpoint_auth_methods_supported") or []
        provider = Provider(
            authorization_endpoint=_endpoint(document, "authorization_endpoint", settings),
            token_endpoint=_endpoint(document, "token_endpoint", settings),
            secret_by_post="client_secret_basic" not in methods and "client_secret_post" in methods,
        )
        if document.get("jwks_uri") not in (None, settings.jwt_jwks_url):
            log.warning(
                "the IdP's discovery document names the key set %s, SNG_JWT_JWKS_URL is %s",
                document.get("jwks_uri"),
                settings.jwt_jwks_url,
            )
    except (httpx.HTTPError, ValueError) as err:
        log.warning("OIDC discovery at %s failed: %s", url, err)
        raise SignInFailed(
            f"{name} cannot be reached just now, so signing in with it is not possible:"
            " try again in a minute, or paste a token.",
            502,
        ) from None
    _discovered[issuer] = (provider, time.monotonic() + DISCOVERY_SECONDS)
    return provider


# -- the flow cookie: state, nonce and verifier, signed, for ten minutes -------------------------
def _flow_key(settings: Settings) -> bytes:
    # Derived from the JWT secret (which only the API holds), for this use only.
    return hmac.new(
        settings.jwt_secret.get_secret_value().encode(), b"sng-play-oidc-flow-v1", "sha256"
    ).digest()


def _cookie_secure(request: Request) -> bool:
    return request.url.scheme == "https" or state_of(request.app).settings.env == "prod"


def _redirect_uri(request: Request, settings: Settings) -> str:
    if settings.oidc_redirect_url:
        return settings.oidc_redirect_url
    return str(request.base_url).rstrip("/") + OIDC_CALLBACK_PATH


def _read_flow(request: Request, settings: Settings) -> dict[str, Any]:
    raw = request.cookies.get(FLOW_COOKIE)
    if not raw:
        raise SignInFailed(
            "This browser has no sign-in under way (it was started in another browser, or"
            " cookies are blocked): start again."
        )
    try:
        flow: dict[str, Any] = jwt.decode(
            raw,
            _flow_key(settings),
            algorithms=["HS256"],
            audience="sng-play-oidc-flow",
            options={"require": ["exp", "state", "nonce", "verifier", "redirect"]},
        )
    except jwt.ExpiredSignatureError:
        raise SignInFailed(
            f"The sign-in took longer than {FLOW_SECONDS // 60} minutes: start again."
        ) from None
    except jwt.PyJWTError:
        raise SignInFailed("This browser's sign-in could not be read: start again.") from None
    return flow


def _clear_flow(response: Response) -> None:
    response.delete_cookie(FLOW_COOKIE, path=FLOW_PATH, httponly=True, samesite="lax")


def _failed(request: Request, failure: SignInFailed, *, clear_flow: bool) -> HTMLResponse:
    response = signin_form(request, failure.sentence, status_code=failure.status_code)
    if clear_flow:
        _clear_flow(response)
    return response


# -- the two routes -------------------------------------------------------------------------------
@router.get("/start")
async def start(request: Request) -> Response:
    settings: Settings = state_of(request.app).settings
    if not settings.oidc_client_id:
        failure = SignInFailed("Signing in with an identity provider is not set up here.", 404)
        return _failed(request, failure, clear_flow=False)
    try:
        provider = await discover(settings)
    except SignInFailed as failure:
        return _failed(request, failure, clear_flow=False)
    state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)  # 64 characters, within PKCE's 43-128
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    redirect = _redirect_uri(request, settings)
    query = urlencode(
        {
            "response_type": "code",
            "client_id": settings.oidc_client_id,
            "redirect_uri": redirect,
            "scope": "openid",
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    separator = "&" if urlsplit(provider.authorization_endpoint).query else "?"
    response = RedirectResponse(
        provider.authorization_endpoint + separator + query, status_code=302
    )
    flow = {
        "aud": "sng-play-oidc-flow",
        "exp": int(time.time()) + FLOW_SECONDS,
        "state": state,
        "nonce": nonce,
        "verifier": verifier,
        "redirect": redirect,
    }
    response.set_cookie(
        FLOW_COOKIE,
        jwt.encode(flow, _flow_key(settings), algorithm="HS256"),
        max_age=FLOW_SECONDS,
        path=FLOW_PATH,
        httponly=True,
        samesite="lax",
        secure=_cookie_secure(request),
    )
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/callback", response_class=HTMLResponse)
async def callback(request: Request) -> Response:
    settings: Settings = state_of(request.app).settings
    params = request.query_params
    name = provider_name(settings)
    if not settings.oidc_client_id:
        failure = SignInFailed("Signing in with an identity provider is not set up here.", 404)
        return _failed(request, failure, clear_flow=False)
    try:
        flow = _read_flow(request, settings)
    except SignInFailed as no_flow:
        # The IdP's own refusal says more than "no flow" (its description is shown only
        # with this browser's state: anyone can put words in a URL).
        error = params.get("error")
        shown = _idp_error(error, name, description=None) if error else no_flow
        return _failed(request, shown, clear_flow=False)
    sent_state = params.get("state", "")
    if not hmac.compare_digest(sent_state.encode(), str(flow["state"]).encode()):
        # Not this browser's flow: leave its own (if any) to finish.
        failure = SignInFailed(
            f"That answer from {name} does not belong to the sign-in this browser started:"
            " start again."
        )
        return _failed(request, failure, clear_flow=False)
    # From here on the flow is spent, whatever happens.
    try:
        if params.get("error"):
            raise _idp_error(
                params.get("error", ""), name, description=params.get("error_description")
            )
        if params.get("iss") not in (None, settings.jwt_issuer):
            # RFC 9207: the answer came from another IdP than the one this flow went to.
            raise SignInFailed(f"That answer did not come from {name}: start again.")
        code = params.get("code")
        if not code:
            raise SignInFailed(f"{name} sent no authorization code back: start again.")
        provider = await discover(settings)
        id_token = await _exchange(settings, provider, code, flow)
        await _verify_id_token(settings, id_token, str(flow["nonce"]))
        try:
            caller = await verify_player_token(settings, id_token)
        except ApiError as err:
            raise SignInFailed(
                f"{name} signed you in, but this server cannot take its token: {err.message}"
            ) from None
    except SignInFailed as failure:
        return _failed(request, failure, clear_flow=True)
    log.info("player %s signed in with %s", caller.user_id, settings.jwt_issuer)
    # Not a redirect: one from here is still part of the IdP's cross-site navigation, and
    # the session cookie (SameSite=Strict) would not reach /play (oidc_signed_in.html).
    response = render(request, "oidc_signed_in.html", {"provider": name})
    set_player_cookie(response, request, id_token)
    _clear_flow(response)
    return response


def _idp_error(error: str, name: str, *, description: str | None) -> SignInFailed:
    if error == "access_denied":
        return SignInFailed(f"You did not allow signing in at {name}: nothing was changed.")
    code = error if ERROR_CODE.fullmatch(error) else "an error"
    said = f": {description[:200]}" if description else ""
    return SignInFailed(f"{name} could not sign you in ({code}{said}). Start again.")


async def _exchange(settings: Settings, provider: Provider, code: str, flow: dict[str, Any]) -> str:
    """The ID token the token endpoint gives for ``code`` (with the PKCE verifier)."""
    name = provider_name(settings)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": str(flow["redirect"]),
        "code_verifier": str(flow["verifier"]),
        "client_id": settings.oidc_client_id,
    }
    headers = {"Accept": "application/json"}
    secret = settings.oidc_client_secret.get_secret_value()
    if secret and provider.secret_by_post:
        form["client_secret"] = secret
    elif secret:
        # RFC 6749 2.3.1: each part form-encoded, then HTTP Basic.
        pair = f"{quote(settings.oidc_client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    try:
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
            answer = await http.post(provider.token_endpoint, data=form, headers=headers)
    except httpx.HTTPError as err:
        log.warning("OIDC token exchange at %s failed: %s", provider.token_endpoint, err)
        raise SignInFailed(
            f"{name} cannot be reached just now: try again in a minute.", 502
        ) from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if answer.status_code >= 500:
        log.warning("OIDC token endpoint answered %s", answer.status_code)
        raise SignInFailed(
            f"{name} cannot complete the sign-in just now: try again in a minute.", 502
        )
    if answer.status_code != 200:
        error = body.get("error") if isinstance(body, dict) else None
        code_name = error if isinstance(error, str) and ERROR_CODE.fullmatch(error) else None
        log.warning("OIDC token exchange refused: %s %s", answer.status_code, code_name)
        raise SignInFailed(
            f"{name} refused to complete the sign-in"
            + (f" ({code_name})" if code_name else "")
            + ": start again."
        )
    id_token = body.get("id_token") if isinstance(body, dict) else None
    if not isinstance(id_token, str) or not id_token:
        raise SignInFailed(f"{name} sent no ID token back: start again.")
    return id_token


async def _verify_id_token(settings: Settings, id_token: str, nonce: str) -> None:
    """The ID token is the IdP's, for this client, current, and for this very flow."""
    name = provider_name(settings)
    try:
        if jwt.get_unverified_header(id_token).get("alg") not in JWKS_ALGORITHMS:
            raise jwt.InvalidAlgorithmError("not one of the identity provider's algorithms")
        client = _jwks_client(str(settings.jwt_jwks_url))
        # PyJWKClient fetches with blocking urllib: keep it off the event loop.
        key = await asyncio.to_thread(client.get_signing_key_from_jwt, id_token)
        claims = jwt.decode(
            id_token,
            key,
            algorithms=JWKS_ALGORITHMS,
            issuer=settings.jwt_issuer,
            audience=settings.oidc_client_id,
            options={"require": ["sub", "exp", "iat", "nonce"]},
        )
    except jwt.PyJWKClientConnectionError as err:
        log.warning("the IdP's key set at %s cannot be read: %s", settings.jwt_jwks_url, err)
        raise SignInFailed(
            f"{name} cannot be reached just now: try again in a minute.", 502
        ) from None
    except jwt.PyJWTError as err:
        log.warning("OIDC ID token refused: %s", err)
        raise SignInFailed(f"The token {name} sent did not verify ({err}): start again.") from None
    if not hmac.compare_digest(str(claims["nonce"]).encode(), nonce.encode()):
        raise SignInFailed(f"The token {name} sent was not made for this sign-in: start again.")
    audience = claims.get("aud")
    azp = claims.get("azp")
    if isinstance(audience, list) and len(audience) > 1 and azp != settings.oidc_client_id:
        raise SignInFailed(f"The token {name} sent was made for another client: start again.")
