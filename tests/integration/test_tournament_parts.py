"""The tournament's view in parts on real PostgreSQL (issue 31, docs/read-model.md "The
tournament's view in parts"): a head and one row per entrant, written by version, read back
into the whole view by both readers; and a whole view stored before the parts, read as it
was.

A played MTT's served view equal to the workflow's is checked in tests/integration/test_mtt.py
(``check_served_view``)."""

from __future__ import annotations

import uuid

from sqlmodel import col, select

from core.codec import codec_for
from core.settings import Settings
from db import readstore
from db.engine import Database
from db.models import TournamentEntrantState
from wire.ids import table_workflow_id, tournament_workflow_id
from wire.messages import (
    EntrantDelta,
    EntrantStatus,
    EntrantView,
    Placing,
    TournamentDelta,
    TournamentPhase,
    TournamentView,
)
from wire.table_messages import TableView

SETTINGS = {
    "seats": 6,
    "entryFee": 100,
    "startingStack": 1000,
    "actionTimeoutSeconds": 30,
    "blindStructure": {
        "startingSmallBlind": 10,
        "increaseFactor": 1.5,
        "levelDurationSeconds": 600,
    },
}


def entrant(player: str, *, seat: int | None = None) -> EntrantView:
    return EntrantView(
        player_id=player,
        owner_user_id=player,
        is_agent=False,
        status=EntrantStatus.PAID,
        seat=seat,
    )


def head(tid: str, version: int, **changes: object) -> TournamentView:
    return TournamentView(
        tournament_id=tid,
        name=tid,
        state=TournamentPhase.PLAYING,
        kind="open",
        seats=6,
        entry_fee=100,
        starting_stack=1000,
        registered_count=3,
        paid_count=3,
        settings=SETTINGS,
        entrants=[],
        version=version,
        **changes,  # type: ignore[arg-type]
    )


async def publish(db: Database, delta: TournamentDelta) -> None:
    """What the persistence activities do with a publication (``publish_view``)."""
    async with db.session() as session:
        await readstore.write_tournament(session, delta)
        await session.commit()


async def versions(db: Database, tid: str) -> dict[str, int]:
    async with db.session() as session:
        rows = await session.exec(
            select(TournamentEntrantState).where(col(TournamentEntrantState.tournament_id) == tid)
        )
        return {r.player_id: r.version for r in rows}


async def test_an_older_publication_arriving_after_a_newer_one_changes_nothing(
    db: Database,
) -> None:
    tid = f"parts-{uuid.uuid4().hex[:8]}"
    newer = TournamentDelta(
        tournament_id=tid,
        version=5,
        head=head(tid, 5, hands_played=4),
        entrants=[
            EntrantDelta(player_id="a", ordinal=0, entrant=entrant("a", seat=1), stack=3000),
            EntrantDelta(
                player_id="b",
                ordinal=1,
                entrant=entrant("b"),
                stack=0,
                stack_ordinal=1,
                finishes=[Placing(player_id="b", place=2, rank=2, hand_number=4)],
            ),
        ],
    )
    await publish(db, newer)
    expected = await readstore.read_tournament(db, tid)
    assert expected is not None and expected.version == 5
    assert [e.player_id for e in expected.entrants] == ["a", "b"]
    assert expected.stacks == {"a": 3000, "b": 0}
    assert [p.player_id for p in expected.standings] == ["b"]

    # A retried publication from before it lands late: its head and its rows of the same
    # entrants are older, and change nothing.
    older = TournamentDelta(
        tournament_id=tid,
        version=4,
        head=head(tid, 4, hands_played=3),
        entrants=[
            EntrantDelta(player_id="a", ordinal=0, entrant=entrant("a", seat=2), stack=1500),
            EntrantDelta(player_id="b", ordinal=1, entrant=entrant("b", seat=3), stack=1500),
        ],
    )
    await publish(db, older)
    assert await readstore.read_tournament(db, tid) == expected
    assert await versions(db, tid) == {"a": 5, "b": 5}

    # The same version again is the same publication (a retry, or a lost task's rerun):
    # it overwrites, as the head's ``write_state`` does.
    await publish(db, newer)
    assert await readstore.read_tournament(db, tid) == expected


async def test_a_whole_view_stored_before_the_parts_reads_as_before(
    db: Database, settings: Settings
) -> None:
    """A head written before this change is the whole view (entrants, stacks, standings),
    with no entrant rows: the record and a table watch serve it unchanged."""
    tid = f"legacy-{uuid.uuid4().hex[:8]}"
    whole = head(tid, 9, hands_played=8).model_copy(
        update={
            "entrants": [entrant("b", seat=2), entrant("a", seat=1), entrant("c")],
            "stacks": {"a": 1800, "b": 1200, "c": 0},
            "standings": [Placing(player_id="c", place=3, rank=3, hand_number=8)],
        }
    )
    table = TableView(
        table_id=table_workflow_id(tid, 1),
        tournament_id=tid,
        hand_no=8,
        level=0,
        small_blind=10,
        big_blind=20,
        ante=0,
        seats=[],
        hand=None,
        deck_commitment=None,
        version=30,
    )
    async with db.session() as session:
        # As ``publish_view`` wrote it before (and still does for a run from before).
        await readstore.write_state(
            session,
            key=tournament_workflow_id(tid),
            kind="tournament",
            version=whole.version,
            public={"view": whole.model_dump(mode="json")},
        )
        await readstore.write_state(
            session,
            key=table.table_id,
            kind="table",
            version=table.version,
            public={"view": table.model_dump(mode="json"), "legal": None},
        )
        await session.commit()

    stored = await readstore.read_tournament(db, tid)
    assert stored == whole
    assert list(stored.stacks) == ["a", "b", "c"]

    from api.read_model import GameStateCache

    cache = GameStateCache(db, codec_for(settings), settings.database_url)
    try:
        watch = await cache.watched(tid, table.table_id)
        assert watch.tournament == whole
    finally:
        await cache.close()
