"""The FastAPI application: lifespan-managed clients, the routers and the error mapping."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from api import errors, openapi
from api.backfill import Backfill
from api.fastpath import GameStateFastPath
from api.guards import LoopbackHostOnly, RefuseNul, SameOriginWebSockets
from api.play import oidc as play_oidc
from api.play import routes as play_pages
from api.play import table as play_table
from api.play import wallet as wallet_pages
from api.preplay import PrePlayRows
from api.ratelimit import RateLimit
from api.read_model import GameStateCache
from api.readcache import SingleFlight
from api.routes import (
    admin,
    advisor,
    agents,
    board,
    chain,
    codec,
    events,
    hands,
    internal,
    me,
    metrics,
    play,
    player_stream,
    room_history,
    rooms,
    tournaments,
    verify,
)
from api.routes.codec import LOOPBACK_HOSTS
from api.state import AppState
from api.streams import StreamSlots
from api.ui import rooms as room_pages
from api.ui import routes as admin_pages
from core.codec import codec_for
from core.settings import Settings, get_settings, require_api_secrets
from core.temporal import connect
from db.engine import Database
from wire.messages import TournamentView

TOURNAMENT_VIEW_TTL = 1.0
"""``GET /tournaments/{id}`` is at most this stale (a write through this replica refreshes it)."""
METRICS_TTL = 15.0
"""``/metrics`` reads PostgreSQL at most this often per replica (Prometheus scrapes every 15 s+)."""


def server_options(settings: Settings) -> dict[str, Any]:
    """What the HTTP server itself must enforce for this app (``sng api`` and the tests' servers
    both pass these to uvicorn): the largest WebSocket message a client may send."""
    return {"ws_max_size": settings.ws_max_message_bytes}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    require_api_secrets(settings)  # only the API holds them (N10); prod refuses weak ones

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        temporal = await connect(settings)
        db = Database(settings.database_url)
        read_model = GameStateCache(
            db,
            codec_for(settings),
            settings.database_url,
            backfill=Backfill(temporal, db),
        )
        await read_model.start()
        state = AppState(
            settings=settings,
            temporal=temporal,
            db=db,
            read_model=read_model,
            pre_play=PrePlayRows(db, read_model, settings.max_long_polls_per_client),
            tournament_views=SingleFlight[str, TournamentView](ttl=TOURNAMENT_VIEW_TTL),
            metrics_snapshots=SingleFlight[str, Any](ttl=METRICS_TTL, size=1),
            stream_slots=StreamSlots(
                settings.max_streams,
                settings.max_streams_per_client,
                settings.max_streams_per_address,
            ),
            login_limiter=MovingWindowRateLimiter(MemoryStorage()),  # /ui/login (L6)
        )
        app.state.app = state  # read back typed: api.state.state_of / AppStateDep
        try:
            yield
        finally:
            await state.pre_play.close()
            await state.read_model.close()
            await state.db.dispose()

    # /docs and /redoc with their scripts and styles served by the API itself (FastAPI's
    # defaults load them from a CDN: blank pages on a machine without one).
    app = FastAPIOffline(
        title="SnG tournaments",
        version="0.1.0",
        description="Durable Sit-and-Go No-Limit Hold'em tournaments for players and agents.",
        lifespan=lifespan,
    )
    errors.install(app)
    openapi.install(app)  # every error status a route answers, with its real body
    # Innermost: the hot read's short way (api/fastpath.py), behind every guard below.
    app.add_middleware(GameStateFastPath)
    app.add_middleware(RefuseNul)
    # A browser page of another origin opens no WebSocket here (security review N9).
    app.add_middleware(SameOriginWebSockets)
    if settings.env == "dev" and settings.api_host in LOOPBACK_HOSTS:
        # Security review L12: a web page can point its own DNS name at 127.0.0.1 (DNS
        # rebinding) and reach the dev API, its open codec and the public dev keys. The dev
        # API answers only requests addressed to this machine by name or loopback address.
        app.add_middleware(LoopbackHostOnly)
    # Outermost: a request past its rate is refused before anything reads its body.
    app.add_middleware(
        RateLimit, per_ip=settings.rate_limit_ip, per_credential=settings.rate_limit_credential
    )
    app.include_router(tournaments.router)
    app.include_router(play.router)
    app.include_router(hands.router)
    app.include_router(codec.router)
    app.include_router(metrics.router)
    app.include_router(admin.router)
    app.include_router(me.router)
    app.include_router(agents.router)
    app.include_router(internal.router)
    app.include_router(events.router)
    app.include_router(player_stream.router)
    app.include_router(advisor.router)
    app.include_router(rooms.router)
    app.include_router(room_history.router)
    app.include_router(verify.router)
    app.include_router(board.router)
    app.include_router(chain.router)
    app.include_router(admin_pages.router)
    app.include_router(room_pages.router)
    app.include_router(play_pages.router)
    app.include_router(wallet_pages.router)
    app.include_router(play_oidc.router)
    app.include_router(play_table.router)

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
