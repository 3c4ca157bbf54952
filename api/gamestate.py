"""A shared, cached fan-out of workflow queries, so polling clients never swamp a workflow.

Temporal refuses queries on a busy workflow once its buffer is full, so however many clients
poll, each table costs a bounded number of queries: one watcher per watched table asks for the
spectator view every ``TICK`` seconds (its version says whether anything changed), and a
viewer's own view is fetched once per version, then served from memory to every request.
Long-polls (``waitForChange``) park on the watcher's change event. Watchers stop when nobody
has asked for ``IDLE`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Query
from prometheus_client import Counter
from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from api.errors import QUERY_TIMEOUT
from domain.game_state import you_view
from workflows.messages import TournamentView
from workflows.table import TableWorkflow
from workflows.table_messages import TableActResult, TableView
from workflows.tournament import TournamentWorkflow

WORKFLOW_QUERIES = Counter(
    "sng_api_workflow_queries_total",
    "Workflow queries the API's game-state cache sent (per process): bounded per table.",
    ["workflow"],
)

WaitForChange = Annotated[int | None, Query(alias="waitForChange", ge=0, le=2**63 - 1)]
"""``waitForChange=<version>``: long-poll until the state's version is another one."""
WaitSeconds = Annotated[float, Query(alias="timeout", ge=0, le=30)]
"""How long a long-poll waits at most."""

TICK = 0.25
IDLE = 30.0
log = logging.getLogger("sng.api.gamestate")


@dataclass
class _Watch:
    table_id: str
    tournament_id: str | None
    """None for a cash room: only the table is asked."""
    version: int = -1
    tournament: TournamentView | None = None
    spectator: TableView | None = None
    views: dict[str | None, TableView] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    locks: dict[str | None, asyncio.Lock] = field(default_factory=dict)
    last_used: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None
    queries: int = 0
    poked: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def table_version(self) -> int:
        return self.spectator.version if self.spectator else -1

    @property
    def final(self) -> bool:
        """Nothing will change any more: the table is done and the tournament (if any) closed."""
        if self.tournament_id is None:
            return bool(self.spectator and self.spectator.finished)
        return bool(
            self.spectator
            and self.spectator.finished
            and self.tournament
            and self.tournament.state in ("closed", "cancelled")
        )


def _install(watch: _Watch, spectator: TableView, tournament: TournamentView | None) -> None:
    """Serve this table state from now on and wake the long-polls. A viewer's own view is
    kept only if it is as new as the table the spectator saw."""
    # Both versions only grow, so their sum is a version that changes with either.
    watch.version = spectator.version + (tournament.version if tournament else 0)
    watch.spectator = spectator
    watch.tournament = tournament
    watch.views = {
        viewer: view for viewer, view in watch.views.items() if view.version >= spectator.version
    }
    watch.views[None] = spectator
    watch.changed.set()
    watch.changed = asyncio.Event()


class GameStateCache:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.watches: dict[str, _Watch] = {}

    async def close(self) -> None:
        for watch in self.watches.values():
            if watch.task:
                watch.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch.task

    async def acted(
        self, tournament_id: str | None, table_id: str, actor: str, result: TableActResult
    ) -> int:
        """An action went through this replica: serve the table as the action left it (the
        views came with the answer, so no query), wake the long-polls, and return the game
        state's version for it. A later version this replica already holds wins."""
        try:
            watch = await self._watch(tournament_id, table_id)
        except (RPCError, WorkflowQueryFailedError):
            # The action went through; only this replica's view of it is missing (a table
            # that just finished, a refused query). Answer, rather than fail the action.
            return result.version

        spectator, actor_view = result.spectator_view, result.actor_view
        if spectator is not None and actor_view is not None:
            if spectator.version > watch.table_version:
                _install(watch, spectator, watch.tournament)
            if actor_view.version >= watch.table_version:
                watch.views[actor] = actor_view
        else:
            watch.poked.set()  # no views came back (an older table): look now instead
        tournament = watch.tournament.version if watch.tournament else 0
        return max(result.version, watch.table_version) + tournament

    async def caught_up(
        self, tournament_id: str | None, table_id: str, table_version: int, limit: float = 2.0
    ) -> int:
        """Read-your-writes after an action: refresh now and wait (up to ``limit`` seconds)
        until this replica serves the table at ``table_version`` or later, so no read that
        follows returns an older state. Returns the game state's version for it (a
        tournament's counts the tournament's changes too: the sum of the two versions)."""
        watch = await self._watch(tournament_id, table_id)
        deadline = time.monotonic() + limit
        while watch.table_version < table_version and time.monotonic() < deadline:
            watch.poked.set()
            event = watch.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), deadline - time.monotonic())
        tournament = watch.tournament.version if watch.tournament else 0
        return max(table_version, watch.table_version) + tournament

    def queries_made(self, table_id: str) -> int:
        watch = self.watches.get(table_id)
        return watch.queries if watch else 0

    async def get(
        self,
        tournament_id: str | None,
        table_id: str,
        viewer: str | None,
        *,
        after_version: int | None = None,
        wait_seconds: float = 0.0,
    ) -> tuple[int, TournamentView | None, TableView]:
        """The current (version, tournament view, table view for ``viewer``); with
        ``after_version``, wait up to ``wait_seconds`` for a newer version first."""
        watch = await self._watch(tournament_id, table_id)
        deadline = time.monotonic() + wait_seconds
        # "Changed" is any other version (not a greater one): a client may carry a version
        # from before play started, which counts differently.
        while after_version is not None and watch.version == after_version:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = watch.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)
        watch.last_used = time.monotonic()
        return watch.version, watch.tournament, await self._view_for(watch, viewer)

    async def _watch(self, tournament_id: str | None, table_id: str) -> _Watch:
        watch = self.watches.get(table_id)
        if watch is None:
            watch = _Watch(table_id=table_id, tournament_id=tournament_id)
            self.watches[table_id] = watch
        watch.last_used = time.monotonic()
        if watch.task is None or watch.task.done():
            try:
                await self._refresh(watch)  # the first caller waits for real data
            except (RPCError, WorkflowQueryFailedError):
                # No such workflow (or not now): forget it, so unknown ids leave nothing behind.
                if watch.spectator is None:
                    self.watches.pop(table_id, None)
                raise
            watch.task = asyncio.create_task(self._run(watch))
        return watch

    async def _run(self, watch: _Watch) -> None:
        # A finished table stops costing queries: its last views are served from memory.
        while time.monotonic() - watch.last_used < IDLE and not watch.final:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watch.poked.wait(), TICK)
            watch.poked.clear()
            try:
                await self._refresh(watch)
            except (RPCError, WorkflowQueryFailedError) as err:  # e.g. a full query buffer
                log.debug("query refused for %s: %s", watch.table_id, err)
        self.watches.pop(watch.table_id, None)

    async def _refresh(self, watch: _Watch) -> None:
        table: WorkflowHandle[Any, Any] = self.client.get_workflow_handle_for(
            TableWorkflow.run, watch.table_id
        )
        tview: TournamentView | None = None
        if watch.tournament_id is None:
            spectator = await table.query(TableWorkflow.view, None, rpc_timeout=QUERY_TIMEOUT)
        else:
            tournament: WorkflowHandle[Any, Any] = self.client.get_workflow_handle_for(
                TournamentWorkflow.run, f"tournament-{watch.tournament_id}"
            )
            spectator, tview = await asyncio.gather(
                table.query(TableWorkflow.view, None, rpc_timeout=QUERY_TIMEOUT),
                tournament.query(TournamentWorkflow.state, rpc_timeout=QUERY_TIMEOUT),
            )
            watch.queries += 1
            WORKFLOW_QUERIES.labels("tournament").inc()
        watch.queries += 1
        WORKFLOW_QUERIES.labels("table").inc()
        # Only forward: an act's answer may have installed a newer table than this query
        # (sent before the act) saw, and the tournament may have moved meanwhile too.
        if watch.spectator is not None and spectator.version < watch.spectator.version:
            spectator = watch.spectator
        if tview is not None and watch.tournament is not None:
            if tview.version < watch.tournament.version:
                tview = watch.tournament
        # Both versions only grow, so their sum is a version that changes with either.
        version = spectator.version + (tview.version if tview else 0)
        if version != watch.version:
            _install(watch, spectator, tview)

    async def _view_for(self, watch: _Watch, viewer: str | None) -> TableView:
        cached = watch.views.get(viewer)
        if cached is not None:
            return cached
        lock = watch.locks.setdefault(viewer, asyncio.Lock())
        async with lock:  # one query per viewer per version, however many requests wait
            cached = watch.views.get(viewer)
            if cached is not None:
                return cached
            table: WorkflowHandle[Any, Any] = self.client.get_workflow_handle_for(
                TableWorkflow.run, watch.table_id
            )
            view = await table.query(TableWorkflow.view, viewer, rpc_timeout=QUERY_TIMEOUT)
            watch.queries += 1
            WORKFLOW_QUERIES.labels("table").inc()
            # Cache it by its own version: under load the table may have moved during the
            # query, and this view is then newer than the watch, not stale.
            if view.version >= watch.table_version:
                watch.views[viewer] = view
            return view


def game_state(
    version: int,
    tournament: TournamentView | None,
    table: TableView,
    fields: dict[str, Any],
    viewer: str | None = None,
) -> dict[str, Any]:
    """The wire shape: the cash fields, the legal actions, and the tournament fields (a cash
    room has none: its ``roomId`` and ``room`` stand in their place)."""
    hand = table.hand or {}
    standings = tournament.standings if tournament is not None else []
    seats = [s.model_dump(by_alias=True, exclude={"owner_user_id", "session"}) for s in table.seats]
    ids: dict[str, Any] = (
        {"tournamentId": tournament.tournament_id}
        if tournament is not None
        else {"roomId": table.room.room_id if table.room else None}
    )
    return {
        "version": version,
        **ids,
        "tableId": table.table_id,
        "handNumber": table.hand_no,
        "stakes": {
            "smallBlind": table.small_blind,
            "bigBlind": table.big_blind,
            "ante": table.ante,
        },
        "deckCommitment": table.deck_commitment,
        # A room seat's owner and sitting number are the workflow's bookkeeping, not the wire's.
        "seats": seats,
        "hand": hand or None,
        "turn": hand.get("turn"),
        "legalActions": hand.get("legal"),
        "lastHand": table.last_hand,
        "you": you_view(
            viewer,
            seat=next((s for s in seats if s["playerId"] == viewer), None),
            hand=table.hand,
            place=next((f.rank for f in standings if f.player_id == viewer), None),
            room=tournament is None,
        ),
        **fields,
    }
