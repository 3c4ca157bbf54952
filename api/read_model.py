"""The read model: game state served from what the tables push (docs/read-model.md), never
from a query.

Each table publishes every new version of its state to PostgreSQL (``read_states``, written by
a local activity before the workflow task that made it commits) and ``NOTIFY``s; a tournament
publishes its own view with its read-model writes. Every API replica ``LISTEN``s: a watched
table is re-read from the store when a newer version is announced, so a read is a lookup in
memory, a long-poll (``waitForChange``) parks on the watch's change event, and however many
replicas and pollers there are, Temporal is asked nothing. While the listening connection is
down a watch re-reads the store every ``TICK`` seconds instead (PostgreSQL, still not
Temporal), and every ``SAFETY`` seconds in any case.

A seat's private part (its hole cards while a hand runs) is sealed in the store for that
table, seat and hand; the replica opens it only for that viewer. Watches stop when nobody has
asked for ``IDLE`` seconds.

``GameStateCache.render`` is every game-state answer's one way out (the HTTP routes, the fast
path, SSE, the WebSocket, the advisor's socket): the viewer's ``GameState`` composed by
``api/game_state.py`` and its JSON body, both kept per viewer and version.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import asyncpg
from fastapi import Depends, Query
from prometheus_client import Counter, Gauge
from pydantic import ValidationError
from sqlalchemy import bindparam, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from api.errors import ApiError
from api.game_state import WatchedTournament, compose
from core.card_seal import parse_public_key
from core.codec import EncryptionCodec, RefusedPayloadError
from core.settings import FAULT_HELD
from db import agents, readstore
from db.engine import Database
from db.readstore import CHANNEL, StoredAnswer, seat_binding, write_act_answer
from domain.errors import ErrorCode
from wire.game_state import GameState
from wire.ids import tournament_workflow_id
from wire.messages import TournamentView
from wire.table_messages import TableActResult, TableSnapshot, TableView, seat_view

WORKFLOW_QUERIES = Counter(
    "sng_api_workflow_queries_total",
    "Workflow queries the API sent (per process); game-state reads send none.",
    ["workflow"],
)
STORE_READS = Counter(
    "sng_api_read_store_reads_total",
    "Reads of the pushed read model (per process): one per announced version per watched table.",
)
SERVED_AHEAD = Counter(
    "sng_api_act_answers_served_ahead_total",
    "Act answers this replica served before its store write of them (``_serve_ahead``).",
)
COMPOSED = Counter(
    "sng_api_game_states_composed_total",
    "Game states composed (per process): one per viewer, or for all spectators, per version,"
    " whichever route or stream asks; an agent's own at each read.",
)
LISTENING = Gauge(
    "sng_api_read_store_listening",
    "1 while this replica's LISTEN connection to the read model's channel is up.",
)

WaitForChange = Annotated[int | None, Query(alias="waitForChange", ge=0, le=2**63 - 1)]
"""``waitForChange=<version>``: long-poll until the state's version is another one."""
WaitSeconds = Annotated[float, Query(alias="timeout", ge=0, le=30)]
"""How long a long-poll waits at most."""


@dataclass(frozen=True, slots=True)
class LongPoll:
    """A game-state read's long-poll: wait until the version is not ``wait_for_change`` (if
    given), at most ``wait_seconds``."""

    wait_for_change: int | None
    wait_seconds: float


def _long_poll(wait_for_change: WaitForChange = None, wait_seconds: WaitSeconds = 20.0) -> LongPoll:
    return LongPoll(wait_for_change=wait_for_change, wait_seconds=wait_seconds)


LongPollDep = Annotated[LongPoll, Depends(_long_poll)]

TICK = 0.25
"""How often a watch re-reads the store while this replica is not listening."""
SAFETY = 5.0
"""A watch re-reads the store at least this often even while listening."""
FIRST_STATE_WAIT = 5.0
"""How long a first read waits for a table that has not published yet (it just started)."""
IDLE = 30.0
PROBE = 10.0
"""How often the listening connection is checked."""
BEHIND_GRACE = 5.0
"""How long a closing replica waits for the store writes of answers it already gave."""
MISSING_FOR = 5.0
"""A table found unpublished is answered as such, without waiting again, for this long."""
log = logging.getLogger("sng.api.read_model")

STORE_TROUBLE = (OSError, asyncpg.PostgresError, DBAPIError, ValidationError)
"""What reading the store can raise when PostgreSQL is away (or a row is not what we wrote)."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """One viewer's game state at one version: the model and its JSON body (what is sent)."""

    version: int
    body: bytes
    state: GameState


class NoPublishedState(Exception):
    """The read store has no state for this table (yet, or ever: an unknown id)."""


def unavailable() -> ApiError:
    return ApiError(
        ErrorCode.TEMPORARILY_UNAVAILABLE,
        "the table has not published its state yet: retry in a moment",
        retry_after_seconds=1,
    )


@dataclass
class _Watch:
    table_key: str
    tournament_key: str | None
    """None for a cash room: only the table is read."""
    version: int = -1
    table: TableSnapshot | None = None
    sealed: dict[str, str] = field(default_factory=dict)
    """Each seat's sealed private part for ``table``'s version."""
    tournament: TournamentView | None = None
    composing: WatchedTournament | None = None
    """``tournament`` with its settings parsed (once per watch) and its shared parts, as the
    composer takes it."""
    pinned: dict[str, TableView] = field(default_factory=dict)
    """A viewer's own view that came with its act's answer, newer than the store held."""
    opened: dict[str, list[str] | None] = field(default_factory=dict)
    rendered: dict[str | None, Rendered] = field(default_factory=dict)
    """Each viewer's game state at a version (None: every viewer who sees a spectator's):
    polls and streams between versions cost no rendering. Never an agent's own
    (``GameStateCache.render``)."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    poked: asyncio.Event = field(default_factory=asyncio.Event)
    last_used: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None
    table_stamp: Any = None
    """When the store wrote ``table`` (a same-version rewrite replaces it)."""
    backfilled: bool = False
    """The workflows were asked once for what finished before the read model existed."""
    echo: int | None = None
    """The table version this replica is writing from an act's answer (``acted``): the first
    notification of it is skipped, since the replica installs that version from its write."""

    @property
    def table_version(self) -> int:
        return self.table.view.version if self.table else -1

    @property
    def spectator(self) -> TableView | None:
        return self.table.view if self.table else None

    @property
    def final(self) -> bool:
        """Nothing will change any more: the table is done and the tournament (if any) closed."""
        view = self.spectator
        if self.tournament_key is None:
            return bool(view and view.finished)
        return bool(
            view
            and view.finished
            and self.tournament
            and self.tournament.state in ("closed", "cancelled")
        )

    def install(
        self,
        table: TableSnapshot | None,
        sealed: dict[str, str] | None,
        tournament: TournamentView | None,
        stamp: Any = None,
    ) -> None:
        """Serve these states from now on (each only if newer) and wake the long-polls. A
        table state of the same version but written later (``stamp``) replaces the one held:
        the table re-published that version after a lost workflow task."""
        rewritten = (
            table is not None
            and table.view.version == self.table_version
            and stamp is not None
            and self.table_stamp is not None
            and stamp > self.table_stamp
        )
        if table is not None and (table.view.version > self.table_version or rewritten):
            self.table, self.sealed, self.opened = table, sealed or {}, {}
            self.table_stamp = stamp
            if rewritten:
                self.rendered = {}
                self.changed.set()
                self.changed = asyncio.Event()
            self.pinned = {
                viewer: view
                for viewer, view in self.pinned.items()
                if view.version > table.view.version
            }
        if tournament is not None and (
            self.tournament is None or tournament.version > self.tournament.version
        ):
            self.tournament = tournament
            self.composing = WatchedTournament.of(tournament, self.composing)
        # Both versions only grow, so their sum is a version that changes with either.
        version = self.table_version + (self.tournament.version if self.tournament else 0)
        if version != self.version:
            self.version = version
            self.rendered = {}
            self.changed.set()
            self.changed = asyncio.Event()


class GameStateCache:
    """Every watched table's newest published state, kept current by ``LISTEN``."""

    def __init__(
        self,
        db: Database,
        codec: EncryptionCodec,
        database_url: str,
        backfill: Callable[[str, str | None], Awaitable[bool]] | None = None,
    ) -> None:
        self.db = db
        self.codec = codec
        self.backfill = backfill
        """Asked once when a first read finds nothing (api/backfill.py)."""
        self.dsn = make_url(database_url).set(drivername="postgresql").render_as_string(False)
        self.watches: dict[str, _Watch] = {}
        self.by_key: dict[str, list[_Watch]] = {}
        self.listening = False
        self._listener: asyncio.Task[None] | None = None
        self.missing: dict[str, float] = {}
        """Tables found unpublished, until when (monotonic)."""
        self.card_keys: dict[str, tuple[float, bytes]] = {}
        """Agents' card keys as last read, until when (monotonic). Only keys: "no key" is
        never remembered (security review N8)."""
        self.placed: dict[tuple[str, str], str] = {}
        """The table each (tournament, player) was last found at (``api/services/play.py
        current_table``): checked against that table's watch before the store is asked."""
        self.announcing: dict[str, asyncio.Event] = {}
        """Set when a key with this prefix is announced (a player in transit waits for the
        tournament's tables, ``announced``)."""
        self.behind: set[asyncio.Task[None]] = set()
        """Act answers served before their store write, being written (``_serve_ahead``)."""
        self.subscribers: list[Callable[[str | None], None]] = []
        """Told each key the channel announces (None: the listener is back, anything may
        have changed meanwhile): the pre-play watches (api/preplay.py)."""

    def subscribe(self, notified: Callable[[str | None], None]) -> None:
        """Call ``notified(key)`` for each announced key, ``notified(None)`` on reconnect."""
        self.subscribers.append(notified)

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen())

    async def close(self) -> None:
        if self.behind:  # answers already given: their writes land before the replica goes
            await asyncio.wait(set(self.behind), timeout=BEHIND_GRACE)
        tasks = [w.task for w in self.watches.values() if w.task] + (
            [self._listener] if self._listener else []
        )
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the channel -------------------------------------------------------------------------
    async def _listen(self) -> None:
        delay = 0.5
        while True:
            conn: asyncpg.Connection | None = None
            try:
                conn = await asyncpg.connect(self.dsn)
                await conn.add_listener(CHANNEL, self._notified)
                self._set_listening(True)
                delay = 0.5
                for watch in self.watches.values():  # what was announced while we were away
                    watch.echo = None  # an own notification sent meanwhile never comes
                    watch.poked.set()
                for notified in self.subscribers:
                    notified(None)
                closed = asyncio.Event()
                conn.add_termination_listener(lambda _conn, closed=closed: closed.set())
                while not closed.is_set():
                    # A probe now and then: a server that vanished without closing the
                    # socket shows up here instead of as silence.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(closed.wait(), PROBE)
                    if not closed.is_set():
                        await asyncio.wait_for(conn.execute("SELECT 1"), PROBE)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # PostgreSQL away: watches poll the store meanwhile
                log.warning("read-model listener down (%s); retrying in %.1fs", err, delay)
            finally:
                self._set_listening(False)
                if conn is not None and not conn.is_closed():
                    with contextlib.suppress(Exception):
                        await conn.close()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)

    def _set_listening(self, up: bool) -> None:
        self.listening = up
        LISTENING.set(1 if up else 0)

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        key, _, version = payload.rpartition(" ")
        for notified in self.subscribers:
            notified(key)
        for prefix in [p for p in self.announcing if key.startswith(p)]:
            self.announcing.pop(prefix).set()
        for watch in self.by_key.get(key, ()):
            known = (
                watch.table_version
                if key == watch.table_key
                else (watch.tournament.version if watch.tournament else -1)
            )
            if key == watch.table_key and version.isdigit() and int(version) == watch.echo:
                # The version this replica is writing from an act's answer, and installs
                # from its write (``acted``; or it reads the store if it cannot): nothing to
                # read, even when the notification beats the write's own reply. Once: a
                # later writer of the same version (a rewrite) wakes the watch as usual.
                watch.echo = None
                continue
            # The same version too: a table re-publishes it after a lost workflow task.
            if not version.isdigit() or int(version) >= known:
                watch.poked.set()

    # -- reads -------------------------------------------------------------------------------
    async def acted(
        self,
        tournament_id: str | None,
        table_id: str,
        actor: str,
        result: TableActResult,
        *,
        write: bool = False,
        hold: float = 0.0,
    ) -> int:
        """An action went through this replica (read-your-writes). Returns the game state's
        version.

        From ``act-answers-v1`` the answer carries the table's new public snapshot
        (``result.state``); with ``write`` this replica writes it to the store
        (``write_act_answer``; the worker writes it too) and serves it from memory, without
        reading the row back; its own notification then finds the version installed
        (``_Watch.echo``). When this replica already serves the state the act left (the same
        hand, its sealed parts held) it serves the answer **at once** and writes it behind
        (``_serve_ahead``): the act's answer and the long-polls of this replica do not wait
        for the write's round trip (docs/read-model.md, "Act answers"). Otherwise it writes
        first and serves what the write says the row holds (its sealed parts and stamp).
        Without ``write`` (the test fault switch ``SNG_TEST_FAULT_SKIP_ACT_WRITE``), after a
        failed write, or when the row holds another version: one read of the store.
        ``hold``: the test fault switch ``SNG_TEST_FAULT_STALL_ACT_WRITE_SECONDS``, a stall
        before the write.

        Before that patch the table published the state the action left before it answered,
        so one read of the store serves it; the actor's own view from the answer covers a
        store that was not written (a table from before the read model)."""
        try:
            watch = await self._watch(tournament_id, table_id)
            if not write or not (
                self._serve_ahead(watch, result.state, hold)
                or await self._install_answer(watch, result.state, hold)
            ):
                await self._refresh(watch)
        except (NoPublishedState, ApiError, *STORE_TROUBLE):
            # The action went through; only this replica's copy is missing. Answer anyway.
            return result.version
        if result.actor_view is not None and result.actor_view.version > watch.table_version:
            watch.pinned[actor] = result.actor_view
            watch.rendered.pop(actor, None)  # its cached body predates the action
        tournament = watch.tournament.version if watch.tournament else 0
        return max(result.version, watch.table_version) + tournament

    def _serve_ahead(self, watch: _Watch, state: TableSnapshot | None, hold: float) -> bool:
        """Serve an act's answer now and write it behind (``acted``), when this replica can
        serve it without the store: it holds an older version of the same table, and, while
        the hand runs, that hand's sealed parts (the write would keep exactly those:
        ``write_public_now``). False: write first (``_install_answer``).

        Serving before the row is written loses nothing a reader relies on: the Update is
        durable in Temporal before its answer comes, this replica serves what it answered
        (read-your-writes on this replica, as before), other replicas learn of it from the
        write's notification as before, and if this replica dies before its write the
        worker's write (after ``WORKER_WRITE_GRACE``) is the one that lands."""
        held = watch.table
        if state is None or held is None or state.view.version <= held.view.version:
            return False
        view = state.view
        if view.hand is not None and not view.hand.get("over", False):
            if held.view.hand_no != view.hand_no or not watch.sealed:
                return False
            sealed = watch.sealed
        else:
            sealed = {}  # the hand is over: the store drops its private parts too
        watch.echo = view.version
        # The write's task is made before the install wakes this replica's long-polls: tasks
        # start in the order they were made, so the write's round trip (which the other
        # replicas' long-polls wait for, by its notification) begins before those renders
        # run, not after them (docs/capacity.md, the six-agent long-poll turn).
        task = asyncio.create_task(self._write_behind(watch, state, hold))
        self.behind.add(task)
        task.add_done_callback(self.behind.discard)
        watch.install(state, sealed, None, None)
        SERVED_AHEAD.inc()
        return True

    async def _write_behind(self, watch: _Watch, state: TableSnapshot, hold: float) -> None:
        """The store write of an answer already served (``_serve_ahead``). What it finds in
        the row corrects the served copy: its stamp (a later rewrite of the same version is
        then told apart) and, should they differ, its sealed parts."""
        version = state.view.version
        stored = await self._write_answer(watch, state, hold)
        if stored is None or stored.version != version or watch.table is not state:
            return  # a newer version is installed or on its way (its notification)
        watch.table_stamp = stored.updated_at
        if stored.private != watch.sealed:
            watch.sealed, watch.opened, watch.rendered = stored.private, {}, {}

    async def _write_answer(
        self, watch: _Watch, state: TableSnapshot, hold: float
    ) -> StoredAnswer | None:
        """The store write of an act's answer, by both of ``acted``'s ways (``hold``: the test
        fault switch's stall before it); None when the store could not take it. Its echo
        (``_Watch.echo``) is dropped unless the write will notify."""
        version = state.view.version
        stored = None
        try:
            if hold:  # killed meanwhile, this replica never writes it
                log.warning(FAULT_HELD, state.key, version, hold)
                await asyncio.sleep(hold)
            stored = await write_act_answer(self.db, state)
        except STORE_TROUBLE:
            log.warning("could not write act answer %s v%s", state.key, version)
        finally:
            if watch.echo == version and (stored is None or not stored.wrote):
                watch.echo = None  # no notification of ours will come
        return stored

    async def _install_answer(
        self, watch: _Watch, state: TableSnapshot | None, hold: float
    ) -> bool:
        """Write an act's answer and install it (``acted``); False: the store must be read."""
        if state is None:
            return False
        version = state.view.version
        watch.echo = version
        stored = await self._write_answer(watch, state, hold)
        if stored is None or stored.version != version:
            return False  # a newer version is there (its notification brings it), or none
        watch.install(state, stored.private, None, stored.updated_at)
        return True

    async def caught_up(
        self, tournament_id: str | None, table_id: str, table_version: int, limit: float = 2.0
    ) -> int:
        """Read-your-writes after a request the table answered: wait (up to ``limit``
        seconds) until this replica serves the table at ``table_version`` or later. Returns
        the game state's version for it."""
        try:
            watch = await self._watch(tournament_id, table_id)
            await self._refresh(watch)
        except (NoPublishedState, *STORE_TROUBLE):
            return table_version  # the request went through; this replica's copy is missing
        deadline = time.monotonic() + limit
        while watch.table_version < table_version and time.monotonic() < deadline:
            event = watch.changed
            watch.poked.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(TICK, deadline - time.monotonic()))
        tournament = watch.tournament.version if watch.tournament else 0
        return max(table_version, watch.table_version) + tournament

    async def render(
        self,
        tournament_id: str | None,
        table_id: str,
        viewer: str | None,
        *,
        after_version: int | None = None,
        wait_seconds: float = 0.0,
        sealed_to: str | None = None,
    ) -> Rendered:
        """``viewer``'s game state (None: a spectator's) now; with ``after_version``, after
        waiting up to ``wait_seconds`` for another version first. Raises ``NoPublishedState``
        when the store has nothing for the table.

        Composed once per viewer and version (``api/game_state.py``); everyone whose state is
        a spectator's (``insider``) shares one. An agent's own state is composed on every
        call: it is sealed to the card key this read found, which another request may have
        found otherwise (security review N8). ``sealed_to``: an advisor reading the player
        ``viewer``'s state gets the cards sealed to its own key when the player's state has
        no key of its own (docs/copilot.md); never kept."""
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
        # The keys first: nothing may await between reading the view and its version. Only a
        # view with the viewer's own cards needs the viewer's (decided here, with no await
        # before the view is read: a view without them has none to seal).
        private = viewer is not None and (viewer in watch.sealed or viewer in watch.pinned)
        card_key = await self._card_key(viewer) if private else None
        if sealed_to is not None and card_key is None:
            card_key = await self._card_key(sealed_to)
        own = viewer is not None and viewer.startswith(agents.AGENT_ID_PREFIX)
        kept = sealed_to is None and not own
        shared = viewer if self._insider(watch, viewer) else None
        if shared is None:
            viewer, card_key, kept = None, None, True  # a spectator's state: no cards to seal
        cached = watch.rendered.get(shared) if kept else None
        if cached is not None and cached.version == watch.version:
            return cached
        COMPOSED.inc()
        state = compose(
            watch.version,
            self._view_for(watch, viewer),
            viewer=viewer,
            tournament=watch.composing if watch.tournament_key is not None else None,
            card_key=card_key,
        )
        rendered = Rendered(
            watch.version, json.dumps(state.to_wire(), separators=(",", ":")).encode(), state
        )
        if kept:
            watch.rendered[shared] = rendered
        return rendered

    async def _card_key(self, viewer: str | None) -> bytes | None:
        """The public key on ``viewer``'s Agent Card, if it is an agent with one. A key read
        is trusted for ``CARD_KEY_TTL`` seconds (another replica's change of it reaches this
        one within that, and meanwhile the cards go sealed to the old key); "no key" is read
        again on every call, so a key put on through any replica seals the very next read
        here (security review N8: never the cards in clear on a stale answer)."""
        if viewer is None or not viewer.startswith(agents.AGENT_ID_PREFIX):
            return None
        now = time.monotonic()
        known = self.card_keys.get(viewer)
        if known is not None and known[0] > now:
            return known[1]
        try:
            encoded = await agents.card_key(self.db, viewer)
        except STORE_TROUBLE:
            if known is not None:
                return known[1]  # the last key read, rather than no game state at all
            # Never the cards in clear to an agent whose key could not be read: retry later.
            raise ApiError(
                ErrorCode.TEMPORARILY_UNAVAILABLE,
                "the agent's card could not be read: retry in a moment",
                retry_after_seconds=1,
            ) from None
        if not encoded:
            self.card_keys.pop(viewer, None)
            return None
        key = parse_public_key(encoded)
        self.card_keys[viewer] = (now + CARD_KEY_TTL, key)
        return key

    async def card_key_of(self, agent_id: str) -> bytes | None:
        """The key on an agent's Agent Card (as ``get`` reads it for the agent's own cards):
        a CoPilot advisor gets the advised player's cards sealed to it (docs/copilot.md)."""
        return await self._card_key(agent_id)

    def forget_card_key(self, agent_id: str) -> None:
        """The agent changed its card here: read it again at its next read."""
        self.card_keys.pop(agent_id, None)

    @staticmethod
    def _insider(watch: _Watch, viewer: str | None) -> bool:
        """Whether ``viewer``'s game state can differ from a spectator's: seated at the table,
        holding a sealed part or a pinned view, or in the tournament's stacks or standings.
        Everyone else sees what a spectator sees, so their states are composed once between
        them (100 watchers of one table cost one rendering per version, not 100)."""
        if viewer is None:
            return False
        if watch.table is None:
            return True
        if viewer in watch.sealed or viewer in watch.pinned:
            return True
        if any(s.player_id == viewer for s in watch.table.view.seats):
            return True
        t = watch.tournament
        return t is not None and (
            viewer in t.stacks or any(f.player_id == viewer for f in t.standings)
        )

    async def refresh(self, table_id: str) -> None:
        """Read the store for a watched table now (a stream that needs the state at least as
        new as an event it read from the log)."""
        watch = self.watches.get(table_id)
        if watch is not None and watch.table is not None:
            with contextlib.suppress(*STORE_TROUBLE):
                await self._refresh(watch)

    async def watched(self, tournament_id: str | None, table_id: str) -> _Watch:
        """The watch of a table, made (and its first state read) if this replica has none;
        ``NoPublishedState`` as ``render``."""
        return await self._watch(tournament_id, table_id)

    async def announced(self, prefix: str, seconds: float) -> None:
        """Wait (at most ``seconds``) until a key starting with ``prefix`` is
        announced; while this replica is not listening, ``TICK`` at most."""
        event = self.announcing.get(prefix)
        if event is None:
            event = self.announcing[prefix] = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds if self.listening else min(seconds, TICK))

    async def seating(self, keys: list[str], player_id: str) -> list[str]:
        """Which of the tables ``keys`` seat ``player_id`` in their stored state: one indexed
        read of those keys (the primary key), the seats matched in PostgreSQL."""
        if len(self.placed) > PLACED_MAX:
            self.placed.clear()  # bounded: a lookup only costs one store read again
        STORE_READS.inc()
        async with self.db.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT key FROM read_states WHERE key IN :keys"
                        " AND public->'view'->'seats' @> CAST(:seat AS jsonb)"
                        " ORDER BY updated_at DESC"
                    ).bindparams(bindparam("keys", expanding=True)),
                    {"keys": keys, "seat": json.dumps([{"player_id": player_id}])},
                )
            ).all()
        return [str(key) for (key,) in rows]

    def snapshot(self, table_id: str) -> _Watch | None:
        """The watch of a table this replica serves (the per-player streams read it)."""
        return self.watches.get(table_id)

    async def _watch(self, tournament_id: str | None, table_id: str) -> _Watch:
        watch = self.watches.get(table_id)
        if watch is None:
            if self.missing.get(table_id, 0.0) > time.monotonic():
                raise NoPublishedState(table_id)
            watch = _Watch(
                table_key=table_id,
                tournament_key=tournament_workflow_id(tournament_id) if tournament_id else None,
            )
            # Listed before the first read, so a notification that comes meanwhile pokes it.
            self.watches[table_id] = watch
            for key in (watch.table_key, watch.tournament_key):
                if key is not None:
                    self.by_key.setdefault(key, []).append(watch)
            try:
                await self._first_state(watch)
            except BaseException:
                self._forget(watch)
                if self.missing:  # bounded: expired entries go as new ones come
                    now = time.monotonic()
                    self.missing = {k: t for k, t in self.missing.items() if t > now}
                self.missing[table_id] = time.monotonic() + MISSING_FOR
                raise
        elif watch.table is None:
            await self._first_state(watch)  # another request is making it: wait for it too
        watch.last_used = time.monotonic()
        if watch.task is None or watch.task.done():
            watch.task = asyncio.create_task(self._run(watch))
        return watch

    def _forget(self, watch: _Watch) -> None:
        if self.watches.get(watch.table_key) is watch:
            del self.watches[watch.table_key]
        for key in (watch.table_key, watch.tournament_key):
            if key is not None and key in self.by_key:
                self.by_key[key] = [w for w in self.by_key[key] if w is not watch]
                if not self.by_key[key]:
                    del self.by_key[key]

    async def _first_state(self, watch: _Watch) -> None:
        """Read the store; a table that has not published yet (it just started) gets
        ``FIRST_STATE_WAIT`` seconds before ``NoPublishedState``."""
        deadline = time.monotonic() + FIRST_STATE_WAIT
        while True:
            await self._refresh(watch)
            ready = watch.table is not None and (
                watch.tournament_key is None or watch.tournament is not None
            )
            if ready:
                return
            if time.monotonic() >= deadline:
                if self.backfill is not None and not watch.backfilled:
                    # Finished before the read model existed? Its workflows say (api/backfill.py).
                    watch.backfilled = True
                    if await self.backfill(watch.table_key, watch.tournament_key):
                        continue
                raise NoPublishedState(watch.table_key)
            await asyncio.sleep(TICK)

    async def _run(self, watch: _Watch) -> None:
        # A finished table stops costing reads: its last state is served from memory until
        # nobody has asked for IDLE seconds.
        try:
            while time.monotonic() - watch.last_used < IDLE:
                if watch.final:
                    await asyncio.sleep(1.0)
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(watch.poked.wait(), SAFETY if self.listening else TICK)
                watch.poked.clear()
                try:
                    await self._refresh(watch)
                except STORE_TROUBLE as err:
                    log.warning("read store unreadable for %s: %s", watch.table_key, err)
        finally:
            self._forget(watch)

    async def _refresh(self, watch: _Watch) -> None:
        keys = [k for k in (watch.table_key, watch.tournament_key) if k is not None]
        held = watch.tournament.version if watch.tournament else -1
        STORE_READS.inc()
        async with self.db.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT key, version, public, private, updated_at,"
                        # A tournament's entrant rows, in the same snapshot as its head, and
                        # only when the head is newer than the one held (docs/read-model.md).
                        " CASE WHEN key = :tournament_key AND version > :held THEN "
                        + readstore.ENTRANT_PARTS.format(tournament=":tournament")
                        + " END FROM read_states WHERE key IN :keys"
                    ).bindparams(bindparam("keys", expanding=True)),
                    {
                        "keys": keys,
                        "tournament_key": watch.tournament_key or "",
                        "held": held,
                        "tournament": (watch.tournament_key or "").removeprefix(
                            tournament_workflow_id("")
                        ),
                    },
                )
            ).all()
        table: TableSnapshot | None = None
        sealed: dict[str, str] | None = None
        tournament: TournamentView | None = None
        stamp: Any = None
        for key, version, public, private, updated_at, parts in rows:
            if key == watch.table_key and (
                version > watch.table_version
                or (version == watch.table_version and updated_at != watch.table_stamp)
            ):
                stamp = updated_at
                table = TableSnapshot(
                    key=key,
                    view=TableView.model_validate(public["view"]),
                    legal=public.get("legal"),
                )
                sealed = dict(private)
            elif key == watch.tournament_key and version > held:
                tournament = readstore.tournament_view(public, parts)
        watch.install(table, sealed, tournament, stamp)

    def _view_for(self, watch: _Watch, viewer: str | None) -> TableView:
        table = watch.table
        assert table is not None  # a watch is only handed out once it has a state
        pinned = watch.pinned.get(viewer or "")
        if pinned is not None and pinned.version > table.view.version:
            return pinned
        if viewer is None or viewer not in watch.sealed:
            return seat_view(table, viewer, None)
        if viewer not in watch.opened:
            watch.opened[viewer] = self._open(watch, table, viewer)
        return seat_view(table, viewer, watch.opened[viewer])

    def _open(self, watch: _Watch, table: TableSnapshot, viewer: str) -> list[str] | None:
        try:
            raw = self.codec.open_value(
                watch.sealed[viewer], seat_binding(table.key, viewer, table.view.hand_no)
            )
        except RefusedPayloadError as err:
            log.error("a sealed seat in the read store does not open: %s", err)
            return None
        cards = json.loads(raw)
        return [str(c) for c in cards]


PLACED_MAX = 100_000
"""How many players' last tables a replica remembers before it starts again."""

CARD_KEY_TTL = 2.0
"""How long a replica trusts the card key it read for an agent (another replica's change or
removal of it reaches this one within this; meanwhile cards go sealed to the old key, never
in clear). "No key" is never trusted from memory."""
