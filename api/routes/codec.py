"""The remote codec endpoint: lets the Temporal UI and CLI show operators decrypted payloads.

Protocol (Temporal's remote codec): ``POST /codec/decode`` and ``POST /codec/encode`` take and
return ``{"payloads": [{"metadata": {k: base64}, "data": base64}]}``. The UI calls from the
browser, so the UI's origin gets CORS answers (preflight included) and the UI's query strings
are ignored.

Who may call: the service key, as ``X-Service-Key`` or as ``Authorization: Bearer <key>`` (what
a UI configured to pass an access token, or a proxy in front of it, sends). In dev the endpoint
is open: the dev server's UI has no login and no way to forward credentials, the API listens on
loopback, and the key it protects is a file in the same data directory anyway.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload, Payloads

from api.auth import key_matches
from api.errors import ApiError
from api.openapi import ERRORS
from api.ratelimit import count_identity
from api.state import state_of
from core.codec import codec_for
from core.settings import Settings
from domain.errors import ErrorCode

router = APIRouter(prefix="/codec", tags=["ops"])

ALLOWED_HEADERS = "content-type, x-namespace, authorization, x-service-key"
_LOOPBACK = {"127.0.0.1", "localhost"}


def ui_origins(settings: Settings) -> set[str]:
    """The browser origins the UI is served from (both loopback spellings for a local UI)."""
    origins = {settings.temporal_ui_url.rstrip("/")}
    if settings.env == "dev":
        origins |= {f"http://{host}:{settings.temporal_ui_port}" for host in _LOOPBACK}
    for origin in list(origins):
        parts = urlsplit(origin)
        if parts.hostname in _LOOPBACK:
            for host in _LOOPBACK:
                origins.add(f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else ""))
    return origins


def cors_headers(request: Request) -> dict[str, str]:
    settings: Settings = state_of(request.app).settings
    origin = request.headers.get("origin")
    if not origin or origin not in ui_origins(settings):
        return {}
    return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Access-Control-Allow-Headers": ALLOWED_HEADERS,
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Max-Age": "600",
        "Vary": "Origin",
    }


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def authorized(request: Request) -> bool:
    settings: Settings = state_of(request.app).settings
    if settings.env == "dev" and settings.api_host in LOOPBACK_HOSTS:
        return True  # the start-dev UI has no login; only this machine reaches the dev API
    presented = request.headers.get("x-service-key", "")
    bearer = request.headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        presented = presented or bearer.split(" ", 1)[1].strip()
    return key_matches(presented, settings.key("codec"))


def refusal(request: Request, status: int, code: ErrorCode, message: str) -> JSONResponse:
    return JSONResponse(
        {"code": code.value, "message": message}, status_code=status, headers=cors_headers(request)
    )


async def apply(request: Request, encode: bool) -> Response:
    if not authorized(request):
        return refusal(
            request,
            401,
            ErrorCode.UNAUTHORIZED,
            "the codec needs the service key (X-Service-Key or Authorization: Bearer)",
        )
    try:
        await count_identity(request.scope, "operator:codec")  # its window (api/ratelimit.py)
    except ApiError as err:
        refused = refusal(request, 429, err.code, err.message)
        refused.headers["Retry-After"] = str(err.retry_after_seconds or 1)
        return refused
    try:
        parsed = json_format.Parse(await request.body(), Payloads(), ignore_unknown_fields=True)
    except (json_format.ParseError, DecodeError, UnicodeDecodeError) as err:
        return refusal(request, 422, ErrorCode.VALIDATION_ERROR, f"not a payloads body: {err}")
    # The display codec: plaintext passes through, so an operator sees a forged input as it
    # was sent (the workers refuse it).
    state = state_of(request.app)
    codec = state.display_codec
    if codec is None:
        codec = state.display_codec = codec_for(state.settings, for_display=True)
    payloads: list[Payload] = list(parsed.payloads)
    try:
        payloads = await (codec.encode(payloads) if encode else codec.open(payloads))
    except Exception as err:  # a wrong key or a tampered payload: say so, never 500
        return refusal(
            request, 422, ErrorCode.VALIDATION_ERROR, f"cannot {request.url.path}: {err!r}"
        )
    body: dict[str, Any] = {"payloads": [json_format.MessageToDict(p) for p in payloads]}
    return JSONResponse(body, headers=cors_headers(request))


# The codec reads its key and its raw body itself (the Temporal UI's shape, not a model).
CODEC_ERRORS = {ERRORS: [401, 413, 422]}


@router.post(
    "/decode", summary="Decrypt payloads for the Temporal UI and CLI", openapi_extra=CODEC_ERRORS
)
async def decode(request: Request) -> Response:
    return await apply(request, encode=False)


@router.post(
    "/encode",
    summary="Encrypt payloads (the UI's signal and query inputs)",
    openapi_extra=CODEC_ERRORS,
)
async def encode(request: Request) -> Response:
    return await apply(request, encode=True)


@router.options("/decode", include_in_schema=False)
@router.options("/encode", include_in_schema=False)
async def preflight(request: Request) -> Response:
    return Response(status_code=204, headers=cors_headers(request))
