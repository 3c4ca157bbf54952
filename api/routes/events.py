"""A tournament's event stream: the durable event log as Server-Sent Events, and as JSON pages.

The log (``events``) is appended by the workflows' publish activity in publication order, so
its id is a total order per tournament and serves as the SSE event id. A client resumes with
``Last-Event-ID`` (what browsers' EventSource send on reconnect) or ``?after=<id>``. Events
are public, like the seed's room broadcast: they carry no hole cards (showdown reveals only),
so the stream needs no credential and works from a browser's EventSource, which cannot send
headers.

The log is polled, not pushed (api/event_log.py): one indexed range read per open stream
every ``POLL_SECONDS`` while idle, which bounds what each connection costs the database.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from sse_starlette import EventSourceResponse

from api.deps import DbDep, PageLimit, TournamentId
from api.errors import ApiError
from api.event_log import PAGE, AfterQuery, EventPage, page, resume_point, sse
from db.engine import Database
from db.models import Tournament
from domain.errors import ErrorCode

router = APIRouter(prefix="/tournaments", tags=["events"])


async def _require_tournament(db: Database, tournament_id: str) -> None:
    """A tournament the read model knows, or ``404 not_found``. Never Temporal (security
    review N9: an unknown id cost a ``DescribeWorkflowExecution`` per request). A workflow
    writes its row before anything else, and ``POST /admin/tournaments`` answers once the row
    is there, so a tournament is known here from its creation's answer on."""
    async with db.session() as session:
        if await session.get(Tournament, tournament_id) is not None:
            return
    raise ApiError(ErrorCode.NOT_FOUND, "no such tournament")


@router.get(
    "/{tournament_id}/events",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "the event stream"},
        204: {"description": "resumed after the final event: the stream has ended"},
    },
)
async def event_stream(
    tournament_id: TournamentId,
    request: Request,
    db: DbDep,
    after: AfterQuery = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    """Server-Sent Events: `event` is the type, `data` its JSON payload, `id` the log id."""
    await _require_tournament(db, tournament_id)
    return await sse(db, tournament_id, request, resume_point(after, last_event_id))


@router.get("/{tournament_id}/events.json", response_model=EventPage, response_model_by_alias=True)
async def event_page(
    tournament_id: TournamentId,
    db: DbDep,
    after: AfterQuery = None,
    limit: PageLimit = PAGE,
) -> EventPage:
    """One page of the log after an id, oldest first, for clients that cannot read SSE."""
    await _require_tournament(db, tournament_id)
    return await page(db, tournament_id, after or 0, limit)
