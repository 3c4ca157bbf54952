"""Who is calling: players by bearer JWT, agents by API key, operators by the service key.

Players send ``Authorization: Bearer <jwt>``: HS256 signed with ``jwt_secret`` (what ``sng
token`` mints), or RS/ES/EdDSA signed by an identity provider whose JWKS URL is
``jwt_jwks_url``. The algorithm lists are explicit, so ``alg: none`` and algorithm confusion
(an RSA public key used as an HMAC secret) are refused; ``exp`` and ``sub`` are required.

Agents send ``X-Agent-Key: sk_...`` or ``Authorization: Bearer sk_...`` (for clients that only
know bearer auth). A JWT never starts with ``sk_``, so the two cannot be confused.

Each check that succeeds counts the request against the window of the identity it verified
(``api.ratelimit.count_identity``: ``player:<sub>``, ``agent:<id>``, ``operator:<door>``), so
the per-credential limit and the stream slots count who is calling, never a header's bytes
(security review N3).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any

import jwt
from fastapi import Depends, Request
from fastapi.openapi.models import HTTPBearer as HTTPBearerModel
from fastapi.security import APIKeyHeader
from fastapi.security.base import SecurityBase

from api.errors import ApiError
from api.play import session as play_session
from api.ratelimit import count_identity
from api.state import state_of
from core.settings import Settings
from db import agents
from db.engine import Database
from domain.errors import ErrorCode

HMAC_ALGORITHMS = ["HS256"]
JWKS_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]


@dataclass(frozen=True)
class Caller:
    user_id: str
    """A player's user id (the token's sub), or an agent's agent id."""
    is_agent: bool = False
    agent_id: str | None = None
    owner_user_id: str | None = None
    """The agent's owner; for a player, the player."""
    skills: tuple[str, ...] = ()

    @property
    def owner(self) -> str:
        return self.owner_user_id or self.user_id

    @property
    def identity(self) -> str:
        """Who the rate limit and the stream slots count this caller as (api/ratelimit.py)."""
        return ("agent:" if self.is_agent else "player:") + self.user_id


@lru_cache(maxsize=4)
def _jwks_client(url: str) -> jwt.PyJWKClient:
    # One client per URL: it caches the key set, so a request costs no fetch once warm, and a
    # token with an unknown kid refetches it at most once a minute (PyJWT >= 2.15's cooldown;
    # security review L4: each made-up kid was a synchronous fetch from the IdP).
    return jwt.PyJWKClient(url, cache_keys=True, lifespan=300, timeout=5, cooldown_duration=60)


USER_ID_PATTERN = r"^[!-~]{1,100}$"
"""A user id (a JWT's ``sub``): 1-100 printable ASCII characters, no spaces or controls, and
never starting with the agents' prefix (``agent-``) or the anonymous observers' (``anon:``)."""

ANONYMOUS_PREFIX = "anon:"
"""The id space of anonymous observers (``api.presence.anonymous``): no credential names one
(security review N9: a token's ``sub`` of ``anon:<hash>`` shared an observer's presence row)."""


def valid_user_id(user_id: object) -> str | None:
    """The user id if it is one (bounded, printable, not in the agents' or the anonymous
    observers' id space), else None."""
    if not isinstance(user_id, str) or not re.fullmatch(USER_ID_PATTERN, user_id):
        return None
    if user_id.startswith((agents.AGENT_ID_PREFIX, ANONYMOUS_PREFIX)):
        return None
    return user_id


VERIFIED_FOR = 60.0
"""A verified token is trusted again without re-verifying for at most this long (and never
past its ``exp``): pollers send the same token many times a second."""
VERIFIED_MAX = 10_000
_verified: OrderedDict[tuple[str, str], tuple[Caller, float]] = OrderedDict()


def _trust(settings: Settings) -> str:
    """What a verification depended on: a token verified under other keys or claims is
    verified again."""
    basis = [
        settings.jwt_secret.get_secret_value(),
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_jwks_url,
    ]
    return hashlib.sha256(repr(basis).encode()).hexdigest()


def remembered_player(settings: Settings, token: str) -> Caller | None:
    """The player of a token verified in the last minute (and not expired since), from
    memory; None when it must be verified (``verify_player_token``)."""
    key = (_trust(settings), hashlib.sha256(token.encode()).hexdigest())
    hit = _verified.get(key)
    if hit is not None and time.time() < hit[1]:
        _verified.move_to_end(key)
        return hit[0]
    return None


async def verify_player_token(settings: Settings, token: str) -> Caller:
    """The player a bearer JWT names, or an ``unauthorized`` refusal. A token verified in the
    last minute (and not expired since) is answered from memory, by its hash."""
    remembered = remembered_player(settings, token)
    if remembered is not None:
        return remembered
    key = (_trust(settings), hashlib.sha256(token.encode()).hexdigest())
    caller, exp = await _verify_player_token(settings, token)
    _verified[key] = (caller, min(exp, time.time() + VERIFIED_FOR))
    while len(_verified) > VERIFIED_MAX:
        _verified.popitem(last=False)
    return caller


async def _verify_player_token(settings: Settings, token: str) -> tuple[Caller, float]:
    try:
        alg = jwt.get_unverified_header(token).get("alg")
        key: Any
        if alg in HMAC_ALGORITHMS:
            key, algorithms = settings.jwt_secret.get_secret_value(), HMAC_ALGORITHMS
        elif alg in JWKS_ALGORITHMS and settings.jwt_jwks_url:
            client = _jwks_client(settings.jwt_jwks_url)
            # PyJWKClient fetches with blocking urllib: keep it off the event loop.
            key = await asyncio.to_thread(client.get_signing_key_from_jwt, token)
            algorithms = JWKS_ALGORITHMS
        else:
            raise ApiError(ErrorCode.UNAUTHORIZED, f"tokens signed with {alg!r} are not accepted")
        claims = jwt.decode(
            token,
            key,
            algorithms=algorithms,
            issuer=settings.jwt_issuer,
            audience=settings.jwt_audience,
            options={"require": ["sub", "exp"]},
        )
    except jwt.PyJWTError as err:
        raise ApiError(ErrorCode.UNAUTHORIZED, f"invalid token: {err}") from None
    user_id = valid_user_id(claims["sub"])
    if user_id is None:
        # Bounded (security review L2) and never an agent's id (M2: a token whose sub was an
        # agent id acted as that agent).
        raise ApiError(
            ErrorCode.UNAUTHORIZED,
            "the token's sub is not a user id (1-100 printable characters, not agent-... or"
            " anon:...)",
        )
    return Caller(user_id=user_id, owner_user_id=user_id), float(claims["exp"])


async def verify_agent_key(db: Database, key: str) -> Caller:
    agent = await agents.by_key(db, key)
    if agent is None:
        raise ApiError(ErrorCode.UNAUTHORIZED, "unknown or revoked agent key")
    return Caller(
        user_id=agent.agent_id,
        is_agent=True,
        agent_id=agent.agent_id,
        owner_user_id=agent.owner_user_id,
        skills=tuple(agent.skills),
    )


# -- the credentials, as the OpenAPI document's security schemes --------------------------------
# Each reads its header as sent and checks nothing itself: the checks below answer every
# refusal with its code. As schemes (not header parameters) a generated client sends them from
# its authenticated client, and the document says which routes take which (issue 28).
class BearerHeader(SecurityBase):
    """``Authorization: Bearer <jwt>`` (a player), or ``Bearer sk_...`` (an agent's key)."""

    def __init__(self) -> None:
        self.model = HTTPBearerModel(
            bearerFormat="JWT",
            description="A player's JWT (`sng token` mints one in dev); an agent's key is"
            " accepted here too.",
        )
        self.scheme_name = "playerToken"

    async def __call__(self, request: Request) -> str | None:
        return request.headers.get("authorization")


player_token = BearerHeader()
agent_key = APIKeyHeader(
    name="X-Agent-Key",
    scheme_name="agentKey",
    description="An agent's key (`sk_...`), from `POST /admin/agents`.",
    auto_error=False,
)
admin_service_key = APIKeyHeader(
    name="X-Service-Key",
    scheme_name="adminKey",
    description="The operators' key (`SNG_ADMIN_KEY`).",
    auto_error=False,
)
internal_service_key = APIKeyHeader(
    name="X-Service-Key",
    scheme_name="internalKey",
    description="The internal services' key (`SNG_INTERNAL_KEY`), not the admin one.",
    auto_error=False,
)
Authorization = Annotated[str | None, Depends(player_token)]
AgentKey = Annotated[str | None, Depends(agent_key)]


async def current_player(
    request: Request, authorization: Authorization, x_agent_key: AgentKey
) -> Caller:
    """A player (bearer JWT) or an agent (API key): whoever plays at a table."""
    caller = await _verified_player(request, authorization, x_agent_key)
    await count_identity(request.scope, caller.identity)
    return caller


async def _verified_player(
    request: Request, authorization: str | None, x_agent_key: str | None
) -> Caller:
    bearer = None
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(ErrorCode.UNAUTHORIZED, "Authorization must be 'Bearer <credential>'")
        bearer = value.strip()
    if x_agent_key and bearer:
        raise ApiError(ErrorCode.UNAUTHORIZED, "send one credential, not both")
    db: Database = state_of(request.app).db
    if x_agent_key:
        return await verify_agent_key(db, x_agent_key.strip())
    if not bearer:
        # The players' pages (api/play): the person's own JWT in the session cookie, taken
        # only when no header names a caller, and only with the page's CSRF token on a
        # request that changes something (api.play.session).
        bearer = play_session.cookie_token(request)
        if bearer is not None and not play_session.csrf_ok(request, bearer):
            raise ApiError(
                ErrorCode.UNAUTHORIZED,
                "a page's request must carry its X-CSRF-Token: reload the page",
            )
    if not bearer:
        raise ApiError(
            ErrorCode.UNAUTHORIZED, "a bearer token or an X-Agent-Key header is required"
        )
    if agents.looks_like_agent_key(bearer):
        return await verify_agent_key(db, bearer)
    return await verify_player_token(state_of(request.app).settings, bearer)


def key_matches(presented: str | None, expected: str) -> bool:
    """An operator key check; an empty expected key (a door without a key) opens nothing."""
    if not presented or not expected:
        return False
    # Bytes, not str: compare_digest raises on a non-ASCII str, and a header can carry one.
    return hmac.compare_digest(presented.encode(), expected.encode())


async def admin_key(
    request: Request, x_service_key: Annotated[str | None, Depends(admin_service_key)]
) -> None:
    """Operators: ``X-Service-Key`` must be the admin key (security review M6)."""
    if not key_matches(x_service_key, state_of(request.app).settings.key("admin")):
        raise ApiError(ErrorCode.UNAUTHORIZED, "a valid X-Service-Key header is required")
    await count_identity(request.scope, "operator:admin")


async def internal_key(
    request: Request, x_service_key: Annotated[str | None, Depends(internal_service_key)]
) -> None:
    """Internal services (the agent-hosting platform): the internal key, not the admin one."""
    if not key_matches(x_service_key, state_of(request.app).settings.key("internal")):
        raise ApiError(
            ErrorCode.UNAUTHORIZED, "a valid X-Service-Key header (the internal key) is required"
        )
    await count_identity(request.scope, "operator:internal")


async def optional_player(
    request: Request, authorization: Authorization, x_agent_key: AgentKey
) -> Caller | None:
    """The caller when a credential is sent (it must then be valid); None for an anonymous
    observer."""
    if not authorization and not x_agent_key and play_session.cookie_token(request) is None:
        return None
    return await current_player(request, authorization, x_agent_key)


CurrentPlayer = Annotated[Caller, Depends(current_player)]
MaybePlayer = Annotated[Caller | None, Depends(optional_player)]
ServiceKey = Depends(admin_key)
InternalKey = Depends(internal_key)
