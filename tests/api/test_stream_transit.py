"""A player's stream that drops while an MTT moves them (issue 31): the drop is recorded at
the table they are moving to as well as the one they left, so the new table's decision timer
gives them the disconnect grace (docs/rooms.md) instead of waiting out every full timeout."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from sqlalchemy import text

from api.routes.player_stream import Target, stream_ended
from api.services.play import bound_for
from api.state import AppState
from db.engine import Database
from wire.ids import table_workflow_id
from wire.messages import TournamentPhase, TournamentView
from wire.mtt import MttPublished


def a_view(mtt: MttPublished | None) -> TournamentView:
    return TournamentView(
        tournament_id="t",
        name="t",
        state=TournamentPhase.PLAYING,
        kind="open",
        seats=9,
        entry_fee=100,
        starting_stack=300,
        registered_count=20,
        entrants=[],
        version=1,
        mtt=mtt,
    )


def test_the_table_an_entry_in_transit_goes_to() -> None:
    view = a_view(MttPublished(tables={"table-t-1": 1, "table-t-3": 3}, in_transit={"p": 3}))
    assert bound_for(view, "p") == table_workflow_id("t", 3)
    assert bound_for(view, "seated") is None
    assert bound_for(a_view(None), "p") is None  # a Sit-and-Go's view names no table


async def dropped_at(db: Database, player: str) -> set[str]:
    async with db.session() as session:
        rows = await session.exec(  # type: ignore[call-overload]
            text(
                "SELECT table_id FROM stream_presence"
                " WHERE player_id = :p AND dropped_at IS NOT NULL"
            ).bindparams(p=player)
        )
        return {row[0] for row in rows}


async def test_a_drop_in_transit_is_recorded_at_the_table_ahead(db: Database) -> None:
    app = cast(AppState, SimpleNamespace(db=db))  # stream_ended reads the database only
    old, new = table_workflow_id("transit", 1), table_workflow_id("transit", 2)
    moving = Target("s", old, "transit", "mover", seated=True, bound_for=new)
    await stream_ended(app, moving)
    assert await dropped_at(db, "mover") == {old, new}
    # Seated, with no move under way: the one table.
    staying = Target("s", old, "transit", "stayer", seated=True)
    await stream_ended(app, staying)
    assert await dropped_at(db, "stayer") == {old}
    # A stream that never seated its player records nothing.
    await stream_ended(app, Target("s", old, "transit", "watcher", bound_for=new))
    assert await dropped_at(db, "watcher") == set()
