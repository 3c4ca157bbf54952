"""Player tokens signed with the deployment's HS256 secret: what ``sng token``, the demo, the
bench and the tests hand to players (production players bring tokens from their identity
provider; ``api.auth`` verifies both kinds)."""

from __future__ import annotations

import time
from typing import Any

import jwt

from core.settings import Settings


def mint_player_token(settings: Settings, user_id: str, *, ttl_seconds: int = 86_400) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "sub": user_id,
        "iss": settings.jwt_issuer,
        "iat": now,
        "exp": now + ttl_seconds,
    }
    if settings.jwt_audience:
        claims["aud"] = settings.jwt_audience
    return jwt.encode(claims, settings.jwt_secret.get_secret_value(), algorithm="HS256")
