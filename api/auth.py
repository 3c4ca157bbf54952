"""Who is calling: players by bearer JWT (HS256), services and operators by the service key."""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from typing import Annotated

import jwt
from fastapi import Depends, Header, Request

from api.errors import ApiError
from domain.errors import ErrorCode
from sng.settings import Settings


@dataclass(frozen=True)
class Caller:
    user_id: str
    is_agent: bool = False
    agent_id: str | None = None


def mint_player_token(settings: Settings, user_id: str, *, ttl_seconds: int = 86_400) -> str:
    now = int(time.time())
    claims = {"sub": user_id, "iss": settings.jwt_issuer, "iat": now, "exp": now + ttl_seconds}
    return jwt.encode(claims, settings.jwt_secret, algorithm="HS256")


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def current_player(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Caller:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise ApiError(ErrorCode.UNAUTHORIZED, "a bearer token is required")
    token = authorization.split(" ", 1)[1].strip()
    settings = _settings(request)
    try:
        # An explicit algorithm list refuses `alg: none` and algorithm confusion.
        claims = jwt.decode(
            token,
            settings.jwt_secret,
            algorithms=["HS256"],
            issuer=settings.jwt_issuer,
            options={"require": ["sub", "exp"]},
        )
    except jwt.PyJWTError as err:
        raise ApiError(ErrorCode.UNAUTHORIZED, f"invalid token: {err}") from None
    return Caller(user_id=str(claims["sub"]))


def service_key(request: Request, x_service_key: Annotated[str | None, Header()] = None) -> None:
    expected = _settings(request).service_key
    if not x_service_key or not hmac.compare_digest(x_service_key, expected):
        raise ApiError(ErrorCode.UNAUTHORIZED, "a valid X-Service-Key header is required")


CurrentPlayer = Annotated[Caller, Depends(current_player)]
ServiceKey = Depends(service_key)
