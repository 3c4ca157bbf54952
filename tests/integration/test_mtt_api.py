"""An MTT played to the end by bots that use only the HTTP API (issue 31, docs/mtt.md, "The
API's table lookup"): every player reads ``GET /tournaments/{id}/game-state`` and acts with
``POST /tournaments/{id}/act`` at whichever table seats them now, across balancing moves,
table breaks and the final table, to ``closed``. The tournament's ``tables`` query is read
only to check the books (each live entry in one place, every chip counted).

On the API that served only table 1, the players of tables 2-4 saw table 1 and never had a
turn: the test fails on the tables acted at (and would time out on the tournament).
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker
from websockets.asyncio.client import connect

from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from domain.icm import icm_is_exact
from domain.payouts import prize_pool, resolve_payout_amounts
from domain.settings import validate_settings
from sdk.advisor import run_advisor
from sdk.bots import run_bot
from sdk.client import SngClient, SngError
from tests.api.support import new_agent
from tests.conftest import serve_api
from tests.integration.helpers import player
from tests.integration.test_mtt import (
    ENTRANTS,
    check_books,
    check_mtt_events,
    mtt_settings,
    start_mtt,
)
from tests.replay import histories_from, replay_histories
from wire.messages import TournamentPhase
from wire.mtt import MttView
from workflows.tournament import TournamentWorkflow


def lively(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Now and then all-in, else check, or call a bet about half the time: stacks move and
    players bust a few at a time (the Update-driven test's bots, tests/integration/test_mtt.py)."""
    actions = state["legalActions"]["actions"]
    roll = rng.random()
    if "all_in" in actions and roll < 0.08:
        return "all_in", None
    if "check" in actions:
        return "check", None
    if "call" in actions and roll < 0.45:
        return "call", None
    return "fold", None


class Recording(SngClient):
    """The SDK's client, keeping every game state and refusal a bot got. The first time its
    player shows up at another table, it answers the old table's last turn once more, naming
    that table: ``moves`` gets the API's answer (``stale``: a refusal's code)."""

    def __init__(
        self, url: str, token: str, log: list[tuple[str, Any]], moves: list[tuple[str, ...]]
    ) -> None:
        super().__init__(url, token=token)
        self.log = log
        self.moves = moves
        self.last: dict[str, Any] | None = None

    async def game_state(
        self, tournament_id: str, *, wait_for_change: int | None = None, wait_seconds: float = 20.0
    ) -> dict[str, Any]:
        state = await super().game_state(
            tournament_id, wait_for_change=wait_for_change, wait_seconds=wait_seconds
        )
        self.log.append(("state", state))
        table, last = state.get("tableId"), self.last
        if table is not None:
            if last is not None and last["tableId"] != table and len(self.moves) < 3:
                try:
                    await super().act(
                        tournament_id,
                        hand_number=last["handNumber"],
                        turn=last["turn"] or 0,
                        action="fold",
                        table_id=last["tableId"],
                    )
                    self.moves.append((last["tableId"], table, "accepted"))
                except SngError as err:
                    self.moves.append((last["tableId"], table, err.code))
            self.last = state
        return state

    async def act(self, tournament_id: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().act(tournament_id, **kwargs)
        except SngError as err:
            self.log.append(("refused", err.code))
            raise


async def listen(url: str, settings: Settings, tid: str, user: str, tables: list[str]) -> None:
    """The player's WebSocket, read only: the tables its game states name, in order."""
    ws_url = url.replace("http://", "ws://") + f"/tournaments/{tid}/me/ws"
    async with connect(ws_url, additional_headers=player(settings, user)) as ws:
        async for raw in ws:
            message = json.loads(raw)
            if message["event"] == "end":
                return
            if message["event"] == "game_state":
                table = message["data"].get("tableId")
                if table and (not tables or tables[-1] != table):
                    tables.append(table)


async def observe(client: Client, tid: str, limit: float) -> list[MttView]:
    """Read the books until play ends, checking each snapshot."""
    handle = client.get_workflow_handle_for(TournamentWorkflow.run, f"tournament-{tid}")
    seen: list[MttView] = []
    deadline = asyncio.get_running_loop().time() + limit
    while asyncio.get_running_loop().time() < deadline:
        state = await handle.query(TournamentWorkflow.state)
        if state.state in (TournamentPhase.STARTING, TournamentPhase.REGISTERING):
            await asyncio.sleep(0.1)
            continue
        view = await handle.query(TournamentWorkflow.tables)
        assert view is not None
        if state.state is not TournamentPhase.PLAYING:
            return seen
        check_books(view)
        seen.append(view)
        await asyncio.sleep(0.1)
    raise AssertionError("the MTT did not end in time")


async def test_an_mtt_plays_to_closed_with_every_player_on_the_http_api(
    client: Client, db: Database, settings: Settings, task_queue: str, worker: Worker
) -> None:
    tid = "mtt-api"
    # 30 big blinds, not 50: the same moves, breaks and final table in fewer hands (this test
    # plays every action over HTTP and was CI's slowest).
    mtt = {**mtt_settings(ENTRANTS), "startingStack": 600}
    handle = await start_mtt(client, db, task_queue, tid, mtt)
    players = [f"{tid}-{i}" for i in range(ENTRANTS)]
    logs: dict[str, list[tuple[str, Any]]] = {p: [] for p in players}
    moves: list[tuple[str, ...]] = []
    async with serve_api(settings) as url:
        bots = [Recording(url, mint_player_token(settings, p), logs[p], moves) for p in players]
        for bot in bots:
            await bot.__aenter__()
        try:
            streamed: dict[str, list[str]] = {p: [] for p in players}
            # Every other player's stream: enough to see streams follow moves, at half the
            # rendering the in-process API does for them.
            sockets = [
                asyncio.create_task(listen(url, settings, tid, p, streamed[p]))
                for p in players[::2]
            ]
            watching = asyncio.create_task(observe(client, tid, limit=600))
            plays = [
                asyncio.create_task(run_bot(bot, tid, lively, seed=i)) for i, bot in enumerate(bots)
            ]
            seen = await watching
            await asyncio.wait_for(asyncio.gather(*plays), 120)
            await asyncio.wait_for(asyncio.gather(*sockets), 30)
        finally:
            for bot in bots:
                await bot.__aexit__(None, None, None)

    # An action for the table a player was moved from: refused with a code, before any
    # table is asked.
    assert moves, "no player was seen moving between tables"
    assert {code for _, _, code in moves} == {"table_moved"}, moves

    # The players acted at every table through the API, and followed their moves.
    acted_at = {
        s.get("tableId")
        for log in logs.values()
        for kind, s in log
        if kind == "state" and s.get("legalActions") and s["you"]["toAct"]
    }
    assert len(acted_at) == 4, acted_at
    assert sum(len(_tables(log)) > 1 for log in logs.values()) >= 5
    # The streams followed their players too: a stream that went on to a table other than
    # table 1 (where a busted player's state is served) followed a live player's move.
    first = f"table-{tid}-1"
    assert any(table != first for t in streamed.values() for table in t[1:]), streamed
    # In transit between two tables: a coded state, never an error.
    transit = [
        s
        for log in logs.values()
        for kind, s in log
        if kind == "state" and (s.get("you") or {}).get("status") == "in_transit"
    ]
    for s in transit:
        assert s["tableId"] is None and s["seats"] == [] and s["you"]["stack"] > 0, s
        assert s["tournament"]["state"] == "playing"
    refused = {code for log in logs.values() for kind, code in log if kind == "refused"}
    assert refused <= {"stale_turn", "not_your_turn", "player_in_transit", "unknown_seat"}
    states = [s for log in logs.values() for kind, s in log if kind == "state"]
    tables_left = check_mtt_views(tid, mtt, states)
    # tablesLeft counts the books' tables still playing: all of them at first, one at the end.
    opened = max(sum(not t.done for t in v.books.tables.values()) for v in seen)
    assert max(tables_left) == opened == 4 and 1 in tables_left, tables_left

    books = seen[-1].books
    assert books.moves.get("break", 0) > 0 and books.moves.get("final", 0) > 0, books.moves
    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    assert sorted(f.place for f in result.standings) == list(range(1, ENTRANTS + 1))
    assert sum(p.amount for p in result.payouts) == prize_pool(validate_settings(mtt), ENTRANTS)
    last = await handle.query(TournamentWorkflow.tables)
    assert last is not None
    # The log tells every move, break and the final table the books counted.
    logged = await check_mtt_events(db, tid, last)
    assert logged["player_moved"] and logged["table_broken"] and logged["final_table"]
    report = await replay_histories(
        client,
        await histories_from(
            client, [handle.id, *(t.workflow_id for t in last.books.tables.values())]
        ),
    )
    assert report.failures == [], report.failures


def check_mtt_views(tid: str, mtt: dict[str, Any], states: list[dict[str, Any]]) -> set[int]:
    """Every MTT game state carries ``mtt`` (docs/mtt.md, "What an agent sees"), with numbers
    the books bear out: every chip counted (``check_books``), so the average stack is the
    field's chips over the players left; paid places from the MTT payout table at the field;
    the table number of the table served; rank and pay jump among the whole field."""
    amounts = resolve_payout_amounts(validate_settings(mtt), ENTRANTS)
    chips = ENTRANTS * mtt["startingStack"]
    ranks: set[int] = set()
    tables_left: set[int] = set()
    for s in states:
        if s["tournament"]["state"] != "playing":
            continue
        m = s["mtt"]
        assert m is not None, s
        tables_left.add(m["tablesLeft"])
        if s["tableId"] is None:
            assert m["tableNumber"] is None, s
        else:
            assert s["tableId"] == f"table-{tid}-{m['tableNumber']}", s
        left = m["playersLeft"]
        assert 1 <= left <= ENTRANTS and m["averageStack"] == chips // left, m
        assert m["paidPlaces"] == len(amounts) and m["paidPlaces"] > 0, m
        assert m["placesToTheMoney"] == max(0, left - len(amounts)), m
        assert m["lateRegistration"] is None and isinstance(m["handForHand"], bool), m
        assert m["icmExact"] == icm_is_exact(left, len(amounts)), m
        mine = s.get("tournamentMyView")
        if mine is not None:
            # Always a number (a large field's is the chip equity, ``icmExact`` false).
            assert isinstance(mine["icmEquity"], int | float), mine
            rank = mine["rank"]
            ranks.add(rank)
            assert rank <= left, (mine, m)
            jump = 0 if rank == 1 else _amount(amounts, rank - 1) - _amount(amounts, rank)
            assert mine["payJumpToNext"] == jump, (mine, amounts)
    # Ranked in the field, not at the table: places beyond one table's seats were served.
    assert max(ranks) > mtt["seats"], sorted(ranks)
    return tables_left


def _amount(amounts: list[int], place: int) -> int:
    return amounts[place - 1] if place <= len(amounts) else 0


def _tables(log: list[tuple[str, Any]]) -> list[str]:
    """The tables a player's game states named, in order, each once."""
    tables: list[str] = []
    for kind, state in log:
        table = state.get("tableId") if kind == "state" else None
        if table and (not tables or tables[-1] != table) and table not in tables:
            tables.append(table)
    return tables


async def test_a_copilot_mtt_advises_each_player_at_the_table_that_seats_them(
    client: Client, db: Database, settings: Settings, task_queue: str, worker: Worker
) -> None:
    """A CoPilot MTT over two tables: each player's advisor gets the requests of the table
    that seats them now, table 2 as well as table 1, and its socket ends with the tournament
    (not when table 1 breaks). On the API that advised at table 1 only, table 2's players got
    no request."""
    tid = "mtt-copilot"
    entrants = 8
    cfg = {**mtt_settings(entrants, seats=4), "kind": "copilot"}
    players = [f"{tid}-{i}" for i in range(entrants)]
    frames: dict[str, list[dict[str, Any]]] = {p: [] for p in players}
    async with serve_api(settings) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            agents = {p: await new_agent(http, settings, p) for p in players}
        handle = await start_mtt(client, db, task_queue, tid, cfg, advisors=agents)
        bots = [SngClient(url, token=mint_player_token(settings, p)) for p in players]
        try:
            advising = [
                asyncio.create_task(run_advisor(url, agents[p]["key"], tid, log=frames[p]))
                for p in players
            ]
            plays = [
                asyncio.create_task(run_bot(bot, tid, lively, seed=i)) for i, bot in enumerate(bots)
            ]
            await asyncio.wait_for(asyncio.gather(*plays), 300)
            await asyncio.wait_for(asyncio.gather(*advising), 30)
        finally:
            for bot in bots:
                await bot.aclose()

    result = await handle.result()
    assert result.state is TournamentPhase.CLOSED
    asked_at: set[str] = set()
    for p, log in frames.items():
        requests = [m["data"] for m in log if m.get("event") == "advice_request"]
        for r in requests:
            assert r["playerId"] == p and r["gameState"]["you"]["playerId"] == p
            assert r["gameState"]["you"]["toAct"]
            asked_at.add(r["gameState"]["tableId"])
        assert log[-1].get("event") == "end", log[-1:]
    assert {f"table-{tid}-1", f"table-{tid}-2"} <= asked_at, asked_at
    last = await handle.query(TournamentWorkflow.tables)
    assert last is not None
    report = await replay_histories(
        client,
        await histories_from(
            client, [handle.id, *(t.workflow_id for t in last.books.tables.values())]
        ),
    )
    assert report.failures == [], report.failures
