"""The leaderboard and the activity feed (issue 29): public, read from what the publications
wrote (db/leaderboard.py), never from histories.

``GET /leaderboard`` ranks the ``leaderboard`` table's rows. The feed is a stream of the event
log (``db.leaderboard.FEED_STREAM``), so its JSON pages and its Server-Sent Events are the
tournament streams' own (``api/event_log.py``): the same cursor, ``more`` rule, resume
by ``Last-Event-ID`` and per-client stream caps.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from sqlmodel import col, select
from sse_starlette import EventSourceResponse

from api.deps import DbDep, PageLimit
from api.event_log import PAGE, AfterQuery, EventPage, page, resume_point, sse
from db.leaderboard import FEED_STREAM
from db.models import LeaderboardRow
from wire.messages import WireModel

router = APIRouter(tags=["leaderboard"])

Kind = Literal["agents", "humans", "all"]
By = Literal["net", "itm", "played", "hands", "biggest_pot"]

_ORDER = {
    "net": LeaderboardRow.net_chips,
    "itm": LeaderboardRow.tournaments_itm,
    "played": LeaderboardRow.tournaments_played,
    "hands": LeaderboardRow.hands_played,
    "biggest_pot": LeaderboardRow.biggest_pot,
}


class LeaderboardEntry(WireModel):
    rank: int
    """1 for the first row; rows that tie on the ranked figure keep the player-id order."""
    player_id: str
    is_agent: bool
    tournaments_played: int
    tournaments_itm: int
    """Tournaments finished in a paid place."""
    net_chips: int
    """Room hands' stack changes plus tournament prizes settled, minus entry fees paid."""
    hands_played: int
    biggest_pot: int
    """The most chips taken from the pots of one hand."""


class Leaderboard(WireModel):
    kind: Kind
    by: By
    entries: list[LeaderboardEntry]


@router.get("/leaderboard", response_model=Leaderboard, response_model_by_alias=True)
async def leaderboard(
    db: DbDep,
    kind: Annotated[Kind, Query(description="agents, humans, or all players")] = "all",
    by: Annotated[By, Query(description="the figure ranked, highest first")] = "net",
    limit: PageLimit = 100,
) -> Leaderboard:
    """The top ``limit`` players by one figure (docs/api.md, "Leaderboard")."""
    query = select(LeaderboardRow).order_by(col(_ORDER[by]).desc(), col(LeaderboardRow.player_id))
    if kind != "all":
        query = query.where(col(LeaderboardRow.is_agent).is_(kind == "agents"))
    async with db.session() as session:
        rows = list(await session.exec(query.limit(limit)))
    return Leaderboard(
        kind=kind,
        by=by,
        entries=[
            LeaderboardEntry(
                rank=i,
                player_id=r.player_id,
                is_agent=r.is_agent,
                tournaments_played=r.tournaments_played,
                tournaments_itm=r.tournaments_itm,
                net_chips=r.net_chips,
                hands_played=r.hands_played,
                biggest_pot=r.biggest_pot,
            )
            for i, r in enumerate(rows, start=1)
        ],
    )


@router.get("/activity", response_model=EventPage, response_model_by_alias=True, tags=["events"])
async def activity_page(db: DbDep, after: AfterQuery = None, limit: PageLimit = PAGE) -> EventPage:
    """One page of the activity feed after an id, oldest first (docs/api.md, "Activity feed")."""
    return await page(db, FEED_STREAM, after or 0, limit)


@router.get(
    "/activity/stream",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "the feed"}},
    tags=["events"],
)
async def activity_stream(
    request: Request,
    db: DbDep,
    after: AfterQuery = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    """The activity feed as Server-Sent Events: `event` is the item's type, `data` its JSON,
    `id` its feed id (resume with `Last-Event-ID` or `?after=`)."""
    return await sse(db, FEED_STREAM, request, resume_point(after, last_event_id))
