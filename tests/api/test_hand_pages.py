"""Hand listings page with a cursor (issue 28): ``after`` (the last hand number read) and
``limit``, and a ``Link: <…>; rel="next"`` header while more hands follow. The body stays
the bare list it always was, so a caller without parameters reads the first page as before.

The hands are written straight into the read store, as the tables' activity writes them; the
tournament and the room are rows too (the hand routes read nothing else)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from core.settings import Settings
from db.engine import Database
from db.models import Hand, Room, Tournament
from tests.conftest import serve_api
from wire.ids import room_workflow_id

HANDS = 23
"""More than two pages of 10 (and one short page at the end)."""


def _record(n: int) -> dict[str, object]:
    return {
        "board": ["Ah", "Kd", "7c"],
        "pots": [{"amount": 30, "winners": [n % 2]}],
        "settlement": {"grossPot": 30, "netToWinner": {str(n % 2): 30}},
    }


@dataclass
class Api:
    http: httpx.AsyncClient
    db: Database
    tid: str
    room: str

    def base(self, kind: str) -> str:
        return (
            f"/tournaments/{self.tid}/hands"
            if kind == "tournament"
            else f"/rooms/{self.room}/hands"
        )


async def _seed(db: Database, TID: str, ROOM: str) -> None:
    async with db.session() as session:
        session.add(
            Tournament(
                id=TID,
                name="pages",
                kind="sng",
                seats=2,
                entry_fee=100,
                rake_fee=0,
                starting_stack=1000,
                settings={},
                state="playing",
                workflow_id=TID,
            )
        )
        session.add(
            Room(
                id=ROOM,
                name="pages",
                seats=2,
                entry=1000,
                small_blind=5,
                big_blind=10,
                speed="normal",
                decision_timeout=30,
                disconnect_grace=60,
                status="playing",
                workflow_id=room_workflow_id(ROOM),
            )
        )
        # A force-ended tournament's marker, hand 0, is never listed.
        session.add(Hand(tournament_id=TID, table_id=f"{TID}-t1", hand_no=0, record=_record(0)))
        # Written out of order: the pages follow the hand number, not the insertion.
        for n in [*range(HANDS, 0, -2), *range(HANDS - 1, 0, -2)]:
            session.add(Hand(tournament_id=TID, table_id=f"{TID}-t1", hand_no=n, record=_record(n)))
            session.add(Hand(table_id=room_workflow_id(ROOM), hand_no=n, record=_record(n)))
        await session.commit()


LINK = re.compile(r'^<(?P<url>[^>]+)>; rel="next"$')


def _next(r: httpx.Response) -> str | None:
    link = r.headers.get("link")
    if link is None:
        return None
    match = LINK.match(link)
    assert match is not None, link
    return match["url"]


@pytest.fixture
async def api(settings: Settings, db: Database) -> AsyncIterator[Api]:
    suffix = uuid.uuid4().hex[:12]
    tid, room = f"t-pages-{suffix}", f"room_pages_{suffix}"
    await _seed(db, tid, room)
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        yield Api(http, db, tid, room)


KINDS = pytest.mark.parametrize("kind", ["tournament", "room"])


@KINDS
async def test_every_hand_once_across_pages_and_the_last_page_says_so(api: Api, kind: str) -> None:
    base = api.base(kind)
    seen: list[int] = []
    url: str | None = f"{base}?limit=10"
    pages = 0
    while url is not None:
        r = await api.http.get(url)
        assert r.status_code == 200, r.text
        body = r.json()
        assert isinstance(body, list) and 0 < len(body) <= 10
        seen += [h["handNumber"] for h in body]
        url = _next(r)
        if url is not None:
            assert url == f"{base}?after={body[-1]['handNumber']}&limit=10"
        pages += 1
    assert seen == list(range(1, HANDS + 1))
    assert pages == 3


@KINDS
async def test_a_full_last_page_has_no_next(api: Api, kind: str) -> None:
    """A page that ends exactly at the last hand says it is last: no empty page to fetch."""
    base = api.base(kind)
    r = await api.http.get(base, params={"after": HANDS - 5, "limit": 5})
    assert [h["handNumber"] for h in r.json()] == list(range(HANDS - 4, HANDS + 1))
    assert _next(r) is None
    past = await api.http.get(base, params={"after": HANDS})
    assert past.status_code == 200 and past.json() == [] and _next(past) is None


async def test_old_callers_get_the_first_hundred_and_now_a_marker(api: Api) -> None:
    """Without parameters: the first 100 as before; past 100 the answer says there is more."""
    TID = api.tid
    async with api.db.session() as session:
        for n in range(HANDS + 1, 106):
            session.add(Hand(tournament_id=TID, table_id=f"{TID}-t1", hand_no=n, record=_record(n)))
        await session.commit()
    r = await api.http.get(f"/tournaments/{TID}/hands")
    assert [h["handNumber"] for h in r.json()] == list(range(1, 101))
    assert _next(r) == f"/tournaments/{TID}/hands?after=100&limit=100"
    rest = await api.http.get(_next(r) or "")
    assert [h["handNumber"] for h in rest.json()] == list(range(101, 106))
    assert _next(rest) is None


@KINDS
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("after=-1", "after"),
        ("after=abc", "after"),
        ("after=1.5", "after"),
        (f"after={2**31}", "after"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=x", "limit"),
    ],
)
async def test_a_bad_cursor_is_a_coded_422(api: Api, kind: str, query: str, field: str) -> None:
    r = await api.http.get(f"{api.base(kind)}?{query}")
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "validation_error" and r.json()["field"] == field
