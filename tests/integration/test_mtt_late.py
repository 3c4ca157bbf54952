"""An MTT's late registration and re-entry on a real Temporal server and PostgreSQL (issue 31,
docs/mtt.md "Late registration and re-entry").

Eight entrants seal at a scheduled start on two full tables of four; registration stays open
into play. Late entrants pay as before and are seated at once at a table with the fewest
players (the first opens table 3, which waits until a second entrant joins it); a player who
busts re-enters as a new entry; at the close the held busts are placed below everyone still
in and registration is refused; the tournament plays to ``closed`` with payouts equal to the
pool of every entry. Every snapshot read is checked (each live entry in one place, every chip
of the entries seated so far counted).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from sqlmodel import select
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from core.settings import Settings
from db import ledger, readstore
from db.engine import Database
from db.models import Event
from domain.payouts import prize_pool, resolve_payout_amounts
from domain.settings import validate_settings
from tests.conftest import serve_api
from tests.integration.helpers import eventually, player
from tests.integration.test_mtt import Bots, check_books, mtt_settings
from tests.replay import histories_from, replay_histories
from tests.test_golden_histories import patch_markers
from wire.messages import (
    CreateTournamentInput,
    ForceEndInput,
    PayEntryInput,
    RegisterInput,
    TournamentPhase,
    TournamentView,
    UnregisterInput,
)
from wire.mtt import MttView
from workflows.tournament import TournamentWorkflow

LATE_SECONDS = 30
"""The first test's window: two late entries, a bust, a re-entry and one more entry fit in it
with room to spare on a loaded machine; each second of it is a second of CI."""


async def fund(db: Database, user: str, times: int = 1) -> None:
    await ledger.transfer(
        db,
        key=f"seed-{user}",
        source=ledger.MINT,
        destination=ledger.user_account(user),
        amount=100 * times,
    )


async def enter(handle: WorkflowHandle[TournamentWorkflow, TournamentView], user: str) -> None:
    await handle.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
    )
    await handle.execute_update(
        TournamentWorkflow.pay_entry, PayEntryInput(player_id=user, amount=100)
    )


async def refused(
    handle: WorkflowHandle[TournamentWorkflow, TournamentView], update: Any, arg: Any
) -> ApplicationError:
    with pytest.raises(WorkflowUpdateFailedError) as info:
        await handle.execute_update(update, arg)
    assert isinstance(info.value.cause, ApplicationError)
    return info.value.cause


async def books(handle: WorkflowHandle[TournamentWorkflow, TournamentView]) -> MttView:
    view = await handle.query(TournamentWorkflow.tables)
    assert view is not None
    check_books(view)
    return view


def where(view: MttView, player: str) -> int | None:
    """The table that seats ``player`` or that they are in transit to."""
    for t in view.books.tables.values():
        if not t.done and player in t.seats.values():
            return t.number
    return next((i.to_table for i in view.books.in_transit if i.player_id == player), None)


async def start_late_mtt(
    client: Client,
    db: Database,
    task_queue: str,
    tid: str,
    settings: dict[str, Any],
    users: list[str],
    *,
    early: int,
    start_in_ms: int = 6_000,
    funds: int = 1,
    force_end_min_level_age_seconds: int | None = None,
    updates_per_run: int | None = None,
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    """An MTT with late registration scheduled ``start_in_ms`` from now: every user funded
    for ``funds`` entries, the first ``early`` registered and paid, returned once it plays."""
    extra: dict[str, Any] = (
        {}
        if force_end_min_level_age_seconds is None
        else {"force_end_min_level_age_seconds": force_end_min_level_age_seconds}
    )
    if updates_per_run is not None:
        extra["updates_per_run"] = updates_per_run
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid,
            name=tid,
            settings={**settings, "scheduledStartAt": int(time.time() * 1000) + start_in_ms},
            hand_pause_ms=0,
            **extra,
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    for user in users:
        await fund(db, user, times=funds)
    for user in users[:early]:
        await enter(handle, user)

    async def playing() -> bool:
        return (await handle.query(TournamentWorkflow.state)).state is TournamentPhase.PLAYING

    await eventually(playing, limit=30)
    return handle


async def test_late_entrants_and_a_re_entry_join_a_running_mtt_until_the_close(
    client: Client, db: Database, task_queue: str, worker: Worker
) -> None:
    tid = "mtt-late"
    settings = {
        **mtt_settings(16, seats=4),
        "minEntrants": 8,
        "lateRegistrationSeconds": LATE_SECONDS,
        "maxReEntries": 1,
    }
    users = [f"{tid}-{i}" for i in range(12)]
    # 20 Updates a run (the least the input takes): the 16 before the start and the two late
    # entries below spend it while the window is open, and the run hands over.
    handle = await start_late_mtt(
        client,
        db,
        task_queue,
        tid,
        settings,
        users,
        early=8,
        start_in_ms=8_000,
        funds=2,
        updates_per_run=20,
    )
    first_run = handle.first_execution_run_id
    view = await books(handle)
    assert view.field_size == 8
    assert sorted(len(t.seats) for t in view.books.tables.values()) == [4, 4]
    state = await handle.query(TournamentWorkflow.state)
    assert state.play_start_ms is not None
    closes_at = state.play_start_ms + LATE_SECONDS * 1000

    # Late entrants: both tables are full, so the first opens table 3, where it waits alone
    # (a table deals to two or more); the second joins it there (the fewest players), and
    # table 3 deals.
    await enter(handle, users[8])
    view = await books(handle)
    assert view.field_size == 9 and view.stacks[users[8]] == 1000
    assert where(view, users[8]) == 3
    await enter(handle, users[9])

    # The run's budget is spent with the window open: new Updates wait (a coded retry) while
    # play comes to rest at a boundary, and a fresh run takes over, the window still open
    # (``late-handover-v1``; it used to run on, its Updates uncounted, toward Temporal's cap).
    async def handed_over() -> bool:
        return (await handle.describe()).run_id != first_run

    await eventually(handed_over, limit=30)
    view = await books(handle)
    assert view.field_size == 10 and where(view, users[9]) == 3
    assert view.books.late_entries == 2

    # Still alive: no re-entry. A paid entry cannot leave once play started.
    alive = await refused(
        handle,
        TournamentWorkflow.register,
        RegisterInput(player_id=users[0], owner_user_id=users[0]),
    )
    assert alive.type == "tournament_already_registered"
    assert "still in play" in str(alive)
    left = await refused(handle, TournamentWorkflow.unregister, UnregisterInput(player_id=users[8]))
    assert left.type == "tournament_not_in_registration"

    # Table 1 shoves every hand until someone busts; the other tables check or fold.
    bots = Bots(client)
    busted: str | None = None
    while busted is None:
        assert time.time() * 1000 < closes_at - 8_000, "nobody busted before the close"
        view = await books(handle)
        busted = next((p for p, chips in view.stacks.items() if chips == 0), None)
        running = [t for t in view.books.tables.values() if not t.done]
        acted = await asyncio.gather(
            *(
                bots.act_at(
                    t.workflow_id,
                    shove_hands=set(range(1, 500)) if t.number == 1 else None,
                    quiet=t.number != 1,
                )
                for t in running
            )
        )
        if not any(acted):
            await asyncio.sleep(0.05)
    state = await handle.query(TournamentWorkflow.state)
    # Its place waits for the close: the field is not final yet.
    assert state.standings == []
    assert view.books.hand_for_hand is False

    # The busted player re-enters: a new entry with the starting stack, seated at once.
    await enter(handle, busted)
    view = await books(handle)
    assert view.stacks[busted] == 1000 and where(view, busted) is not None
    assert view.field_size == 11
    await enter(handle, users[10])
    view = await books(handle)
    assert view.field_size == 12

    # The rest of the window: quiet play (arrivals take their seats at boundaries).
    while time.time() * 1000 < closes_at + 1_000:
        view = await books(handle)
        running = [t.workflow_id for t in view.books.tables.values() if not t.done]
        if not any(await asyncio.gather(*(bots.act_at(w, quiet=True) for w in running))):
            await asyncio.sleep(0.05)

    async def closed() -> TournamentView | None:
        s = await handle.query(TournamentWorkflow.state)
        return s if s.standings else None

    state = await eventually(closed, limit=15)
    # Registration is refused after the close with the seed's code, the re-entry too.
    late = await refused(
        handle,
        TournamentWorkflow.register,
        RegisterInput(player_id=users[11], owner_user_id=users[11]),
    )
    assert late.type == "tournament_not_in_registration"
    view = await books(handle)
    assert view.field_size == 12
    alive_at_close = sum(1 for chips in view.stacks.values() if chips > 0)
    held = state.standings
    assert held and all(f.place > alive_at_close for f in held)
    assert any(f.player_id == busted for f in held)

    # Then to the end: every table shoves. A player busted after the close may not re-enter.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 240
    no_re_entry: str | None = None
    while True:
        assert loop.time() < deadline, "the MTT did not end in time"
        state = await handle.query(TournamentWorkflow.state)
        if state.state is not TournamentPhase.PLAYING:
            break
        view = await books(handle)
        out = next((p for p, chips in view.stacks.items() if chips == 0), None)
        if no_re_entry is None and out is not None:
            after = await refused(
                handle, TournamentWorkflow.register, RegisterInput(player_id=out, owner_user_id=out)
            )
            assert after.type == "tournament_not_in_registration", after
            no_re_entry = out
        running = [t.workflow_id for t in view.books.tables.values() if not t.done]
        if not any(
            await asyncio.gather(
                *(bots.act_at(w, shove_hands=set(range(1, 5000))) for w in running)
            )
        ):
            await asyncio.sleep(0.05)

    assert no_re_entry is not None, "no busted player was seen to try a re-entry"
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    assert result.field_size == 12
    assert sorted(f.place for f in result.standings) == list(range(1, 13))
    # The re-entered player finished twice, once per entry.
    assert sum(1 for f in result.standings if f.player_id == busted) == 2
    # And the read model, one row per player, holds both (issue 31: the view in parts).
    assert await readstore.read_tournament(db, tid) == result
    pool = prize_pool(validate_settings(settings), 12)
    assert pool == 12 * 100
    assert sum(p.amount for p in result.payouts) == pool
    assert result.entry_fees_total == 1200

    history = await handle.fetch_history()
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert failed == []
    final = await handle.query(TournamentWorkflow.tables)
    assert final is not None
    found = await histories_from(
        client, [handle.id, *(t.workflow_id for t in final.books.tables.values())]
    )
    runs = [h for h in found if h.workflow_id == handle.id]
    assert len(runs) >= 2, "late registration's run never handed over"
    assert any("late-handover-v1" in patch_markers(h.to_json()) for h in runs)
    report = await replay_histories(client, found)
    assert report.failures == [], report.failures


async def test_busted_players_re_enter_once_each_and_a_second_re_entry_is_refused(
    client: Client, db: Database, task_queue: str, worker: Worker
) -> None:
    """Six entrants on two tables of three, every hand all-in; each player who busts
    re-enters at once while late registration is open (``maxReEntries: 1``), until one
    busts a second time: that player's next registration is refused
    (``tournament_registration_limit``). The tournament plays to ``closed`` with a place for
    every entry and payouts equal to the pool of every entry paid."""
    tid = "mtt-reentry"
    settings = {
        **mtt_settings(12, seats=3),
        "minEntrants": 6,
        "lateRegistrationSeconds": 120,
        "maxReEntries": 1,
    }
    users = [f"{tid}-{i}" for i in range(6)]
    handle = await start_late_mtt(client, db, task_queue, tid, settings, users, early=6, funds=3)
    bots = Bots(client)
    entries = dict.fromkeys(users, 1)
    limited: str | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 100
    while limited is None:
        assert loop.time() < deadline, "nobody busted twice before the close"
        state = await handle.query(TournamentWorkflow.state)
        assert state.state is TournamentPhase.PLAYING, "it ended before a second bust"
        view = await books(handle)
        # The paid places are not known while the field can grow: no bubble, no hand-for-hand.
        assert not view.books.hand_for_hand
        for out in [p for p, chips in view.stacks.items() if chips == 0]:
            if entries[out] == 1:
                await enter(handle, out)  # a new entry, seated at once
                entries[out] = 2
                view = await books(handle)
                assert view.stacks[out] == 1000 and where(view, out) is not None
            else:
                limit = await refused(
                    handle,
                    TournamentWorkflow.register,
                    RegisterInput(player_id=out, owner_user_id=out),
                )
                assert limit.type == "tournament_registration_limit", limit
                limited = out
                break
        running = [t.workflow_id for t in view.books.tables.values() if not t.done]
        shoves = await asyncio.gather(
            *(bots.act_at(w, shove_hands=set(range(1, 5000))) for w in running)
        )
        if not any(shoves):
            await asyncio.sleep(0.05)
    assert view.field_size == 6 + sum(n - 1 for n in entries.values())
    # No place is given while the field can still grow.
    assert (await handle.query(TournamentWorkflow.state)).standings == []

    # Then to the end (all-in every hand): late registration closes by its timer or with the
    # end (one entry left), and the busts it held are placed below everyone still in.
    deadline = loop.time() + 60
    while True:
        assert loop.time() < deadline
        state = await handle.query(TournamentWorkflow.state)
        if state.state is not TournamentPhase.PLAYING:
            break
        view = await books(handle)
        running = [t.workflow_id for t in view.books.tables.values() if not t.done]
        if not any(
            await asyncio.gather(
                *(bots.act_at(w, shove_hands=set(range(1, 5000))) for w in running)
            )
        ):
            await asyncio.sleep(0.05)
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    field = 6 + sum(n - 1 for n in entries.values())
    assert result.field_size == field
    assert sorted(f.place for f in result.standings) == list(range(1, field + 1))
    assert sum(1 for f in result.standings if f.player_id == limited) == 2
    assert sum(p.amount for p in result.payouts) == prize_pool(validate_settings(settings), field)
    history = await handle.fetch_history()
    assert not [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    final = await handle.query(TournamentWorkflow.tables)
    assert final is not None
    report = await replay_histories(
        client,
        await histories_from(
            client, [handle.id, *(t.workflow_id for t in final.books.tables.values())]
        ),
    )
    assert report.failures == [], report.failures


async def test_a_force_end_during_late_registration_closes_it_and_settles_every_entry(
    client: Client, db: Database, task_queue: str, worker: Worker
) -> None:
    """Six entrants on two full tables of three; a late entrant opens table 3 and waits
    there alone; table 1 shoves until someone busts (held: no place yet). An operator's
    force-end then stops every table, the one that never dealt included, closes late
    registration (the held bust placed below every live entry) and settles to ``closed``
    with payouts equal to the pool of all seven entries."""
    tid = "mtt-late-end"
    settings = {
        **mtt_settings(12, seats=3),
        "minEntrants": 6,
        "lateRegistrationSeconds": 300,
    }
    users = [f"{tid}-{i}" for i in range(7)]
    handle = await start_late_mtt(
        client, db, task_queue, tid, settings, users, early=6, force_end_min_level_age_seconds=0
    )
    await enter(handle, users[6])
    view = await books(handle)
    assert where(view, users[6]) == 3 and view.field_size == 7
    assert view.books.tables[3].hands == 0 and view.books.tables[3].at_boundary

    bots = Bots(client)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while not any(chips == 0 for chips in view.stacks.values()):
        assert loop.time() < deadline, "nobody busted at table 1"
        if not await bots.act_at(view.books.tables[1].workflow_id, shove_hands=set(range(1, 500))):
            await asyncio.sleep(0.05)
        view = await books(handle)
    busted = {p for p, chips in view.stacks.items() if chips == 0}
    assert (await handle.query(TournamentWorkflow.state)).standings == []

    await handle.execute_update(TournamentWorkflow.force_end, ForceEndInput())
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    assert result.field_size == 7
    assert sorted(f.place for f in result.standings) == list(range(1, 8))
    alive = 7 - len(busted)
    assert all(f.place > alive for f in result.standings if f.player_id in busted)
    assert sum(p.amount for p in result.payouts) == prize_pool(validate_settings(settings), 7)
    final = await handle.query(TournamentWorkflow.tables)
    assert final is not None and all(t.done for t in final.books.tables.values())
    history = await handle.fetch_history()
    assert not [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    report = await replay_histories(
        client,
        await histories_from(
            client, [handle.id, *(t.workflow_id for t in final.books.tables.values())]
        ),
    )
    assert report.failures == [], report.failures


async def test_late_registration_over_the_http_api(
    client: Client, db: Database, settings: Settings, task_queue: str, worker: Worker
) -> None:
    """The same routes and codes as before the start: a late entrant registers and pays over
    HTTP while the MTT plays, an unpaid reserve may leave, a paid one may not (``409
    tournament_not_in_registration``); the two late entrants' table (opened by the first,
    dealing once the second joins) is the one their game state serves; after the close
    ``register`` is ``409 tournament_not_in_registration``."""
    tid = "mtt-late-http"
    mtt = {
        **mtt_settings(12, seats=3),
        "minEntrants": 6,
        "lateRegistrationSeconds": 25,
    }
    users = [f"{tid}-{i}" for i in range(10)]
    handle = await start_late_mtt(
        client, db, task_queue, tid, mtt, users, early=6, force_end_min_level_age_seconds=0
    )
    state = await handle.query(TournamentWorkflow.state)
    assert state.play_start_ms is not None
    closes_at = state.play_start_ms + 25_000
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url) as http:

        async def post(user: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
            return await http.post(
                f"/tournaments/{tid}/{path}", json=body or {}, headers=player(settings, user)
            )

        for user in users[6:8]:
            r = await post(user, "register")
            assert r.status_code == 200, r.text
            assert r.json()["status"] == "reserved"
            r = await post(user, "pay", {"amount": 100})
            assert r.status_code == 200 and r.json()["status"] == "paid", r.text
        # A paid late entry plays on: no refund.
        r = await post(users[6], "leave")
        assert (r.status_code, r.json()["code"]) == (409, "tournament_not_in_registration")
        # An unpaid reserve may leave, as before the start.
        assert (await post(users[8], "register")).status_code == 200
        r = await post(users[8], "leave")
        assert r.status_code == 200 and r.json()["refunded"] == 0, r.text

        view = await books(handle)
        assert where(view, users[6]) == where(view, users[7]) == 3
        assert view.field_size == 8

        async def served_at_table_3() -> dict[str, Any] | None:
            r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, users[7]))
            assert r.status_code == 200, r.text
            body: dict[str, Any] = r.json()
            return body if body.get("tableId") == f"table-{tid}-3" else None

        served = await eventually(served_at_table_3, limit=15)
        assert served["you"]["stack"] > 0
        # The MTT view: the table served, the field of 8 (paid places at 8), late
        # registration open until its close.
        m = served["mtt"]
        assert m["tableNumber"] == 3 and m["tablesLeft"] == 3, m
        assert m["lateRegistration"] == {"open": True, "closesAt": closes_at}, m
        assert m["paidPlaces"] == len(resolve_payout_amounts(validate_settings(mtt), 8)), m
        assert m["averageStack"] == 8 * mtt["startingStack"] // m["playersLeft"], m

        async def closed() -> bool:
            return time.time() * 1000 > closes_at + 1_000 and bool(
                (await handle.query(TournamentWorkflow.state)).field_size == 8
            )

        await eventually(closed, limit=40)

        async def shown_closed() -> bool:
            r = await http.get(f"/tournaments/{tid}/game-state", headers=player(settings, users[7]))
            late = (r.json().get("mtt") or {}).get("lateRegistration") or {}
            return late.get("open") is False

        await eventually(shown_closed, limit=15)
        r = await post(users[9], "register")
        assert (r.status_code, r.json()["code"]) == (409, "tournament_not_in_registration")
    await handle.execute_update(TournamentWorkflow.force_end, ForceEndInput())
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    assert sorted(f.place for f in result.standings) == list(range(1, 9))
    # The log announced the close with the final field and pool.
    async with db.session() as session:
        closes = (
            await session.exec(
                select(Event).where(
                    Event.tournament_id == tid, Event.type == "late_registration_closed"
                )
            )
        ).all()
    assert [e.payload for e in closes] == [
        {"fieldSize": 8, "prizePool": prize_pool(validate_settings(mtt), 8)}
    ]


async def test_a_late_entrant_reads_their_entry_as_soon_as_register_answers(
    client: Client, db: Database, settings: Settings, task_queue: str, worker: Worker
) -> None:
    """Read-your-writes while play publishes beside registration. A late entrant's reserve
    changes the books, then its writes run (the entrant row, then the tournament's view);
    meanwhile a hand boundary publishes the view too, and its publication carries the new
    entrant (it changed). The register's own publication must carry it as well: the answer
    comes after that one lands, not after the hand's. Forced here with uncommitted rows the
    writes wait on: the entrant's row holds the register's first write until a hand has been
    taken, and each table's next hand row holds the hand's publication until the entrant has
    read the tournament."""
    from sqlalchemy import text

    tid = "mtt-late-ryw"
    mtt = {**mtt_settings(12, seats=4), "minEntrants": 8, "lateRegistrationSeconds": 60}
    users = [f"{tid}-{i}" for i in range(9)]
    handle = await start_late_mtt(
        client, db, task_queue, tid, mtt, users, early=8, force_end_min_level_age_seconds=0
    )
    late = users[8]
    view = await books(handle)
    running = [t for t in view.books.tables.values() if not t.done]
    assert len(running) == 2
    async with (
        db.engine.connect() as hold_hands,
        db.engine.connect() as hold_entrant,
        serve_api(settings) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        hands = await hold_hands.begin()
        for t in running:
            await hold_hands.execute(
                text(
                    "INSERT INTO hands (tournament_id, table_id, hand_no, level, record, "
                    "created_at) VALUES (:tid, :table, :hand, 1, '{}', now())"
                ),
                {"tid": tid, "table": t.workflow_id, "hand": t.hands + 1},
            )
        entrant = await hold_entrant.begin()
        await hold_entrant.execute(
            text(
                "INSERT INTO entrants (tournament_id, player_id, owner_user_id, is_agent, "
                "status, registered_at, updated_at) "
                "VALUES (:tid, :player, :player, false, 'held', now(), now())"
            ),
            {"tid": tid, "player": late},
        )
        register = asyncio.create_task(
            http.post(f"/tournaments/{tid}/register", json={}, headers=player(settings, late))
        )

        async def waiting_on(table: str) -> bool:
            async with db.engine.connect() as conn:
                n = (
                    await conn.execute(
                        text(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                            "'Lock' AND query ILIKE :q"
                        ),
                        {"q": f"%INSERT INTO {table}%"},
                    )
                ).scalar_one()
            return bool(n)

        await eventually(lambda: waiting_on("entrants"), limit=30)
        # A hand ends at one of the tables; the tournament takes it (the books count it)
        # and its publication waits on the held hand row.
        bots = Bots(client)

        async def hand_taken() -> bool:
            now = await books(handle)
            if sum(t.hands for t in now.books.tables.values()) > 0:
                return await waiting_on("hands")
            await asyncio.gather(*(bots.act_at(t.workflow_id) for t in running))
            return False

        await eventually(hand_taken, limit=60)
        await entrant.rollback()  # the register's writes go on
        r = await register
        assert r.status_code == 200 and r.json()["status"] == "reserved", r.text
        r = await http.get(f"/tournaments/{tid}")
        assert r.status_code == 200, r.text
        mine = [e for e in r.json()["entrants"] if e["playerId"] == late]
        assert [e["status"] for e in mine] == ["reserved"], r.json()["entrants"]
        await hands.rollback()
    await handle.execute_update(TournamentWorkflow.force_end, ForceEndInput())
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    found = await histories_from(client, [handle.id, *(t.workflow_id for t in running)])
    replayed = await replay_histories(client, found)
    assert replayed.failures == [], replayed.failures
