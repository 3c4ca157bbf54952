"""Seed behaviours pinned end to end (issue 28): the payout's ``txHash``, the persisted level,
blinds fixed at the deal, the rank after a bust, and one advisor per CoPilot table.

Each test reads the seed's words (quoted) against the running workflows and the database.
The first four share **one** tournament, played once for the module in skipped time (CI time:
each used to play its own): nobody acts, so the action timeouts play every hand; while it
plays, the driver records what the database shows at each level, then it plays to the end;
the view at the first bust is the one the tournament published to the read model with that
bust's hand, read back from its history (a sample of the read model could miss it).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import col, select
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from api.game_state import WatchedTournament
from db.engine import Database
from db.models import Event, Hand, LedgerEntry, PayoutIntent, Tournament
from db.readstore import CHANNEL
from domain.game_state import tournament_my_view
from tests.conftest import time_skipping_server
from tests.integration.helpers import eventually, start_paid_tournament
from tests.replay import histories_from
from wire.ids import tournament_workflow_id
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    EntrantDelta,
    HandRow,
    RegisterInput,
    TournamentDelta,
    TournamentRow,
    TournamentView,
)
from wire.tournament_delta import compose
from workflows.tournament import TournamentWorkflow

pytestmark = pytest.mark.slow

# Nobody ever acts: the action timeouts (in skipped time) play every hand. A hand lasts two
# 20 s timeouts (the button and the small blind fold to the big blind), so the first level's
# 30 s deadline passes while hand 1 runs.
PASSIVE: dict[str, Any] = {
    "seats": 3,
    "entryFee": 100,
    "startingStack": 200,
    "actionTimeoutSeconds": 20,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 2.0, "levelDurationSeconds": 30},
}


@dataclass
class LevelSeen:
    """One level as the workflow and, while it played, the tournament's row showed it."""

    level: int
    row_level: int | None
    """What the row said (waiting up to 10 s for it to say ``level``)."""
    row_state: str | None
    row_level_started_ms: int | None
    expected_started_ms: int


@dataclass
class Played:
    tid: str
    final: TournamentView
    levels: list[LevelSeen] = field(default_factory=list)
    bust_snapshot: TournamentView | None = None
    """The view the tournament published to the read model with the first bust's hand, when
    that hand left more than one player in (None: both went out in it)."""
    announced: set[int] = field(default_factory=set)
    """The versions of the tournament's view the read store announced (``NOTIFY``) as written
    while it played."""
    events: list[Event] = field(default_factory=list)
    hands: dict[int, Hand] = field(default_factory=dict)


async def _events(db: Database, tid: str) -> list[Event]:
    async with db.session() as s:
        return list(
            (
                await s.exec(
                    select(Event).where(Event.tournament_id == tid).order_by(col(Event.id))
                )
            ).all()
        )


async def _published_views(client: Client, workflow_id: str) -> dict[int, TournamentView]:
    """By hand number, the view the tournament published to the read model with each hand it
    recorded, as the store composes it (``wire.tournament_delta.compose``): ``record_hand``'s
    input, which that activity writes to the read store in the hand's own transaction
    (``publish_view``, activities/persistence.py), is the head and the entrants that changed
    since the publication before (``save_tournament``'s, ``publish_entrants``'s or a hand's),
    or a whole view from a run before the view came in parts. Read from every run's history
    in order, so no moment of play has to be caught while it lasts."""
    views: dict[int, TournamentView] = {}
    rows: dict[str, EntrantDelta] = {}
    runs = sorted(
        await histories_from(client, [workflow_id]),
        key=lambda h: h.events[0].event_time.ToNanoseconds(),
    )
    kinds: dict[str, type] = {
        "record_hand": HandRow,
        "save_tournament": TournamentRow,
        "publish_entrants": TournamentDelta,
    }
    for history in runs:
        for event in history.events:
            if not event.HasField("activity_task_scheduled_event_attributes"):
                continue
            scheduled = event.activity_task_scheduled_event_attributes
            kind = kinds.get(scheduled.activity_type.name)
            if kind is None:
                continue
            [arg] = await client.data_converter.decode(scheduled.input.payloads, [kind])
            delta = arg if isinstance(arg, TournamentDelta) else arg.delta
            if delta is not None:
                rows.update({r.player_id: r for r in delta.entrants})
            if isinstance(arg, HandRow):
                if arg.view is not None:
                    views[arg.hand_no] = arg.view
                elif delta is not None and delta.head is not None:
                    views[arg.hand_no] = compose(delta.head, rows.values())
    return views


@asynccontextmanager
async def _announced(db: Database, key: str) -> AsyncIterator[set[int]]:
    """The versions of ``key``'s state the read store announces while the block runs (its
    ``NOTIFY``, db/readstore.py): each one a version it wrote."""
    heard: set[int] = set()

    def note(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        announced_key, _, version = payload.rpartition(" ")
        if announced_key == key:
            heard.add(int(version))

    async with db.engine.connect() as conn:
        raw: Any = (await conn.get_raw_connection()).driver_connection
        await raw.add_listener(CHANNEL, note)
        try:
            yield heard
        finally:
            await raw.execute("SELECT 1")  # a round trip: what was sent before is delivered
            await raw.remove_listener(CHANNEL, note)


@pytest.fixture(scope="module")
async def played(db: Database) -> AsyncIterator[Played]:
    """One tournament, played once: what it showed while playing, and how it ended."""
    from worker import build_worker

    async with time_skipping_server() as env:
        task_queue = f"tq-{uuid.uuid4().hex[:8]}"
        tid = f"seed-{uuid.uuid4().hex[:6]}"
        async with build_worker(env.client, db, task_queue):
            async with _announced(db, tournament_workflow_id(tid)) as announced:
                handle = await start_paid_tournament(
                    env.client, db, task_queue, tid, PASSIVE, hand_pause_ms=500
                )
                levels: dict[int, LevelSeen] = {}
                for _ in range(300):
                    await env.sleep(timedelta(seconds=2))
                    view = await handle.query(TournamentWorkflow.state)
                    if view.state in ("registering", "starting"):
                        continue
                    if view.state != "playing":
                        break
                    if view.current_level > 0 and view.current_level not in levels:
                        assert view.play_start_ms is not None

                        async def persisted(level: int = view.current_level) -> Tournament | None:
                            async with db.session() as s:
                                row = await s.get(Tournament, tid)
                            return row if row is not None and row.current_level == level else None

                        try:
                            row: Tournament | None = await eventually(persisted)
                        except AssertionError:  # the test says so, with what the row showed
                            async with db.session() as s:
                                row = await s.get(Tournament, tid)
                        started = row.level_started_at if row is not None else None
                        levels[view.current_level] = LevelSeen(
                            level=view.current_level,
                            row_level=row.current_level if row is not None else None,
                            row_state=row.state if row is not None else None,
                            row_level_started_ms=(
                                round(started.timestamp() * 1000) if started is not None else None
                            ),
                            expected_started_ms=view.play_start_ms + view.current_level * 30_000,
                        )
                    if len(levels) >= 2:
                        break
                # Bounded, so a regression that never ends the tournament (blinds that never rise)
                # fails the module instead of hanging it; skipped time makes this minutes of play.
                final = await asyncio.wait_for(handle.result(), 600)
            played = Played(tid=tid, final=final, levels=list(levels.values()), announced=announced)
            played.events = await _events(db, tid)
            busts = [e.payload for e in played.events if e.type == "player_eliminated"]
            if busts:
                # The view at the first bust: what its hand published, whenever the next came.
                first = min(b["handNumber"] for b in busts)
                view = (await _published_views(env.client, handle.id))[first]
                if sum(1 for chips in view.stacks.values() if chips > 0) > 1:
                    played.bust_snapshot = view
            async with db.session() as s:
                played.hands = {
                    h.hand_no: h
                    for h in (await s.exec(select(Hand).where(Hand.tournament_id == tid))).all()
                }
            yield played


async def test_the_tournament_played_to_its_end(played: Played) -> None:
    assert played.final.state == "closed"
    assert sorted(f.place for f in played.final.standings) == [1, 2, 3]


async def test_a_settled_payout_carries_its_ledger_reference_as_tx_hash(
    played: Played, db: Database
) -> None:
    """Seed: "/internal/payout-confirmed broadcasts tournament_payout_settled { position,
    userId, amount, txHash }". With virtual chips there is no transaction: ``txHash`` holds the
    ledger posting's reference (wire/events.py), the same one the payout intent keeps."""
    settled = [e.payload for e in played.events if e.type == "tournament_payout_settled"]
    assert settled
    assert sorted(p["position"] for p in settled) == [p.position for p in played.final.payouts]
    async with db.session() as s:
        intents = {
            i.position: i
            for i in (
                await s.exec(select(PayoutIntent).where(PayoutIntent.tournament_id == played.tid))
            ).all()
        }
    for event in settled:
        intent = intents[event["position"]]
        assert (event["userId"], event["amount"]) == (intent.player_id, intent.amount)
        assert event["txHash"] and event["txHash"].startswith("ledger:")
        assert event["txHash"] == intent.tx_hash  # the event and the intent name one posting
        posting = event["txHash"].removeprefix("ledger:")
        async with db.session() as s:
            legs = (
                await s.exec(select(LedgerEntry).where(LedgerEntry.posting_key == posting))
            ).all()
        # The reference is the posting that paid the prize to the winner's account.
        assert {leg.account_id: leg.amount for leg in legs if leg.amount > 0} == {
            f"user:{intent.player_id}": intent.amount
        }


async def test_the_current_level_is_persisted_as_levels_advance(played: Played) -> None:
    """Seed: on the level timer, "Increment currentLevel, Update levelStartedAt, Persist both
    to tables.current_level + tables.level_started_at" — while the tournament plays, not only
    when it ends. The driver waited, at each new level, for the row to show it."""
    assert len(played.levels) >= 2, f"levels seen while playing: {played.levels}"
    for seen in played.levels:
        assert (seen.row_level, seen.row_state) == (seen.level, "playing"), seen
        assert seen.row_level_started_ms == seen.expected_started_ms, seen


async def test_a_hand_keeps_the_blinds_it_was_dealt_with(played: Played) -> None:
    """Seed: "forcedBets are synced ... before each deal — there's no race between 'blinds
    changed' and 'next deal'": a hand's blinds are the level at its deck draw's recorded time.
    The first hand here is dealt at play start and lasts two 20 s timeouts, so the 30 s level
    deadline passes mid-hand: it keeps level 0's blinds; the next deal takes level 1's."""
    order = [
        (e.type, e.payload.get("level"), e.payload.get("handNumber"))
        for e in played.events
        if e.type in ("blind_level_changed", "hand_result")
    ]
    # The level changed while hand 1 ran (the tournament orders them by the table's clock)...
    assert order.index(("blind_level_changed", 1, None)) < order.index(("hand_result", 0, 1))
    # ... yet hand 1 was dealt, posted and recorded at level 0's blinds,
    first = played.hands[1]
    assert first.level == 0
    assert (first.record["small_blind"], first.record["big_blind"]) == (10, 20)
    assert sorted(first.record["posted_blinds"].values()) == [10, 20]
    # and the next deal, after the deadline, took level 1's.
    second = played.hands[2]
    assert second.level == 1
    assert (second.record["small_blind"], second.record["big_blind"]) == (20, 40)
    assert sorted(second.record["posted_blinds"].values()) == [20, 40]


async def test_ranks_are_updated_after_a_bust(played: Played) -> None:
    """Seed: after a bust, "player_eliminated (one per bust) → fresh game_state (each remaining
    agent's tournamentMyView ranks update) → hand_result"; "rank: 1-indexed, smaller = better".
    A player's game state composes ``tournamentMyView`` from the tournament's read-model view
    (``tournament_my_view``, composed by api/game_state.py), which the bust's hand writes with
    its eliminations."""
    snapshot = played.bust_snapshot
    busts = [e.payload for e in played.events if e.type == "player_eliminated"]
    # Each bust's event names its standing, which the final standings keep.
    assert len(busts) == 2
    places = {f.player_id: f.place for f in played.final.standings}
    for bust in busts:
        assert bust["rank"] == bust["place"] == places[bust["playerId"]]
    assert sorted(b["place"] for b in busts) == [2, 3]
    if snapshot is None:
        # The first bust's hand left one player: both went out in it, no one-bust state exists.
        assert len({b["handNumber"] for b in busts}) == 1, busts
        return
    # The read store took this view (it announces each version it writes) and the API serves it.
    assert snapshot.version in played.announced, (snapshot.version, sorted(played.announced))
    assert snapshot.state == "playing"
    out = {f.player_id for f in snapshot.standings if f.place > 1}
    assert out, snapshot.standings
    live = {p: c for p, c in snapshot.stacks.items() if c > 0}
    assert 1 < len(live) < 3 and set(live) | out == set(snapshot.stacks)
    watched = WatchedTournament.of(snapshot)

    def my_view(player: str) -> Any:
        return tournament_my_view(watched.settings, watched.parts, snapshot.stacks, player)

    for player in out:
        assert snapshot.stacks[player] == 0
        assert my_view(player) is None  # no rank once out
    ranks = {p: my_view(p).rank for p in live}
    # Ranked among the survivors only, by the stacks after the bust's hand.
    assert ranks == {p: 1 + sum(1 for c in live.values() if c > live[p]) for p in live}
    assert max(ranks.values()) <= len(live) and min(ranks.values()) == 1


async def test_one_advisor_advises_one_player_per_table(
    client: Client, worker: Worker, task_queue: str
) -> None:
    """Seed: a CoPilot registration's advisor must be "owned by the registrant, skill-matched
    to poker:sng, not already advising another player at this table"; "a registration without
    a valid advisor is rejected (advisor_required)". At a table an advisor is bound to one
    player: another registrant cannot bind it (advisor_required, nothing changes), and its
    owner cannot hold a second entry to bind it twice (one entry per owner), and the
    workflow's own check (an advisor already bound here) refuses it whatever its owner."""
    tid = f"adv-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(tournament_id=tid, name=tid, settings={**PASSIVE, "kind": "copilot"}),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )

    def advised(player: str, owner: str, advisor: str, advisor_owner: str) -> RegisterInput:
        # The API resolves the advisor's owner and skills from the agent registry.
        return RegisterInput(
            player_id=player,
            owner_user_id=owner,
            advisor_agent_id=advisor,
            advisor_owner_user_id=advisor_owner,
            advisor_skills=["poker:sng"],
        )

    async def refused(req: RegisterInput) -> ApplicationError:
        before = await handle.query(TournamentWorkflow.state)
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await handle.execute_update(TournamentWorkflow.register, req)
        after = await handle.query(TournamentWorkflow.state)
        assert after == before  # a refusal changes nothing
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError)
        return cause

    first = await handle.execute_update(
        TournamentWorkflow.register, advised("alice", "alice", "adv-a", "alice")
    )
    assert first.status == "reserved"
    # Bob names Alice's advisor: refused with the seed's code.
    taken = await refused(advised("bob", "bob", "adv-a", "alice"))
    assert (taken.type, cause_field(taken)) == ("advisor_required", "advisorAgentId")
    # The workflow's own rule, past the ownership check: even with an owner's word for it
    # (the registry gives an agent one owner, so only this input can say so), an advisor
    # bound at this table advises no second player.
    shared = await refused(advised("carol", "carol", "adv-a", "carol"))
    assert (shared.type, cause_field(shared)) == ("advisor_required", "advisorAgentId")
    assert "already advises another player" in str(shared), shared
    # Alice cannot take a second seat to bind it to another player either.
    twice = await refused(advised("alice-2", "alice", "adv-a", "alice"))
    assert twice.type == "tournament_already_registered"
    # Bob with his own advisor is fine at the same table.
    second = await handle.execute_update(
        TournamentWorkflow.register, advised("bob", "bob", "adv-b", "bob")
    )
    assert second.status == "reserved"
    view = await handle.query(TournamentWorkflow.state)
    assert {e.player_id: e.advisor_agent_id for e in view.entrants} == {
        "alice": "adv-a",
        "bob": "adv-b",
    }
    await handle.execute_update(TournamentWorkflow.cancel, CancelInput())
    assert (await handle.result()).state == "cancelled"


def cause_field(err: ApplicationError) -> str | None:
    details = err.details[0] if err.details else None
    return details.get("field") if isinstance(details, dict) else None
