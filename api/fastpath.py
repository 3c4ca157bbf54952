"""The hot read's short way: ``GET /tournaments/{id}/game-state`` for a caller this replica
already knows, answered without FastAPI's routing and dependency resolution.

Agents poll their game state many times a second, and on a small machine FastAPI's per-request
machinery (routing, solving dependencies, parsing parameters) cost more than the read itself,
which is a memory lookup in the pushed read model (docs/read-model.md, docs/capacity.md). This
ASGI middleware sits inside every other one (rate limits, the NUL and body guards, the dev host
check all still apply) and takes a request only when all of this holds:

- the path is exactly a tournament's game state and the tournament id is a valid one;
- the query has nothing but ``waitForChange`` and ``timeout``, each at most once, each valid
  under the very types the route declares;
- the credential is one bearer token (no agent key) that this replica verified in the last
  minute (``api.auth.remembered_player``), and that player is within its rate window (it
  counts against it here, ``api.ratelimit.count_identity``, exactly as the route would);
- this replica already serves the tournament's table (its watch exists).

Then it answers with ``api.services.play.tournament_game_state``, the function the route itself
serves, so the two cannot differ. Anything else, and any refusal that function raises, goes
to the full application, which answers it (or refuses it with its coded error) as before.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from prometheus_client import Counter
from pydantic import TypeAdapter, ValidationError
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from api.auth import remembered_player
from api.deps import ID_PATTERN
from api.errors import ApiError
from api.ratelimit import count_identity
from api.read_model import WaitForChange, WaitSeconds
from api.services.play import tournament_game_state
from api.state import state_of
from api.stream_auth import StreamCredential
from db import agents
from wire.ids import table_workflow_id

PATH = re.compile(r"/tournaments/([^/]{1,64})/game-state")
TOURNAMENT_ID = re.compile(ID_PATTERN)
PARAMETERS: dict[str, TypeAdapter[Any]] = {
    "waitForChange": TypeAdapter(WaitForChange),
    "timeout": TypeAdapter(WaitSeconds),
}
DEFAULT_WAIT = 20.0
"""The route's own default for ``timeout``."""

SHORT_READS = Counter(
    "sng_api_game_state_short_reads_total",
    "Game-state reads answered by the fast path (the rest went through the full route)",
)


class GameStateFastPath:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            match = PATH.fullmatch(scope["path"])
            if match is not None and await self._served(scope, match.group(1), send):
                return
        await self.app(scope, receive, send)

    async def _served(self, scope: Scope, tournament_id: str, send: Send) -> bool:
        if TOURNAMENT_ID.fullmatch(tournament_id) is None:
            return False
        params = _parameters(scope.get("query_string", b""))
        if params is None:
            return False
        token = _bearer(scope)
        if token is None:
            return False
        state = state_of(scope["app"])
        caller = remembered_player(state.settings, token)
        if caller is None:
            return False
        try:
            # The verified player's window, as the route's own check would count it: past
            # it, the full route answers (and refuses it, 429 rate_limited).
            await count_identity(scope, caller.identity)
        except ApiError:
            return False
        if state.read_model.snapshot(table_workflow_id(tournament_id)) is None:
            return False
        try:
            body = await tournament_game_state(
                state,
                tournament_id,
                caller.user_id,
                params.get("waitForChange"),
                params.get("timeout", DEFAULT_WAIT),
                StreamCredential(HTTPConnection(scope), caller.user_id),
            )
        except ApiError:
            return False  # the full route answers it, with its coded error
        SHORT_READS.inc()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
        return True


def _parameters(query: bytes) -> dict[str, Any] | None:
    """The query's values under the route's own types, or None for anything else."""
    try:
        pairs = parse_qsl(query.decode("ascii"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return None
    out: dict[str, Any] = {}
    for name, raw in pairs:
        adapter = PARAMETERS.get(name)
        if adapter is None or name in out:
            return None
        try:
            out[name] = adapter.validate_python(raw)
        except ValidationError:
            return None
    return out


def _bearer(scope: Scope) -> str | None:
    """The token of a request carrying exactly one ``Authorization: Bearer`` and nothing else
    that names a caller; None otherwise (the full route decides)."""
    token: str | None = None
    for name, value in scope.get("headers", []):
        lowered = name.lower()
        if lowered == b"x-agent-key":
            return None
        if lowered == b"authorization":
            if token is not None:
                return None
            scheme, _, rest = value.decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not rest.strip():
                return None
            token = str(rest.strip())
    if token is None or agents.looks_like_agent_key(token):
        return None
    return token
