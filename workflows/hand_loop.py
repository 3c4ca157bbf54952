"""The hand loop both table workflows compose: deal No-Limit Hold'em hands at one table.

`HandLoop` owns the cards and the betting (every rule comes from the engine in
``domain/holdem``), the players' recorded actions, the requests its Updates leave for it, and
what the table publishes to the read store. Where it runs is a `Venue`: a tournament's table
(workflows/table.py: blinds from the level clock, reports to the tournament) or a cash room
(workflows/room.py: fixed stakes, join and leave, an event stream, a ledger settlement per
hand). The venue answers the few questions that differ; the loop calls it at fixed points.

Each hand's deck is shuffled from a secret made by an activity (never ``workflow.random()``).
From the ``deck-v2`` patch on (docs/fairness.md) the loop commits to the next hand's cards a
hand ahead (one salted commitment per position, a Merkle root), takes the seats' seeds for it
until it deals it, deals in the order the seeds fix, and reveals only the board and the
cards shown down, each with its opening; each seat gets its own cards' openings, and the
records form a hash chain. Before the patch the deck's SHA-256 commitment was public from the
deal and its seed revealed with the record. The determinism rules it keeps are in
docs/durability.md.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from core import deck_vault
    from domain import deck as decks
    from domain import fairness
    from domain.blinds import Blinds
    from domain.errors import DomainError, ErrorCode
    from domain.holdem import (
        STREETS,
        ActionKind,
        AnteMode,
        ButtonPositions,
        Hand,
        actor_legal,
        first_positions,
        hand_record,
        next_positions,
        private_parts,
        public_view,
        start_hand,
    )
    from domain.holdem.timeouts import sitting_out_action, timeout_penalty
    from wire.game_state import HandRecord
    from wire.messages import EventInput
    from wire.table_messages import (
        ActInput,
        ActResult,
        DeckDraw,
        NextDeck,
        PendingDeck,
        SeedInput,
        SeedResult,
        SitInInput,
        TableActResult,
        TablePublication,
        TableSeat,
        TableSnapshot,
        TableState,
        TableView,
        seat_view,
    )
    from workflows import effects
    from workflows.alarm import Alarm
    from workflows.budget import UPDATE_BUDGET, run_budget_spent
    from workflows.errors import refusal
    from workflows.inbox import Inbox, wait_or_serve

RAISES_PER_ROUND = 20
"""Raises (all-ins apart) one betting round takes: a house rule that bounds a hand's acts."""

HANDS_PER_RUN = 20
"""Continue-as-new at least this often: ~20 hands stay far below 2,000 updates and 10,000
events per run (an accepted action with its re-armed timer costs about 7 events)."""

READ_MODEL_PATCH = "read-model-v1"
"""Tables publish their state to the read store (docs/read-model.md) from this patch on."""

DECK_PATCH = "deck-v2"
"""Card commitments, the players' seeds and reveal-only-what-is-shown (docs/fairness.md)."""

DECK_KEY_PATCH = "deck-key-v1"
"""A deck draw must come sealed under the worker-only deck key, for the table and hand it was
asked for (core/deck_vault.py): a plain or misaddressed secret is refused."""

RECORD_PLAYERS_PATCH = "record-players-v1"
"""A hand record's ``players`` are the seats dealt in (before: every seat at the table)."""

STOP_PATCH = "stop-at-waits-v1"
"""A tournament table reads a stop only where it waits with nothing else to take: in a
decision, after the actions and the fired timer it was handed with, and after a hand's deck
draw (docs/durability.md, rule 9)."""

TIMEOUT_FOLD_PATCH = "timeout-fold-v1"
"""The second decision timeout in a row folds the player (and sits them out) even where a
check is legal (seed 004, "Decision timeouts"); before it, such a timeout checked. Decided
once at each run's start (``HandLoop.fold_second_timeout``)."""


GRACE_PATCH = "stream-grace-v1"
"""The disconnect grace is measured from the player's stream drop, which the API records
(seed 004; docs/rooms.md): a seat whose decision timer runs out while its stream has been
down for less than ``disconnectGrace`` is held until drop + grace, at a room and at a
tournament's table alike. Before it a room gave the grace only to lapsed polling, and a
tournament's table none. Decided once at each run's start (``HandLoop.stream_grace``)."""


ACT_ANSWER_PATCH = "act-answers-v1"
"""A decision an ``act`` Update caused, while its hand runs, is not published by local
activity: the Update's answer carries the table's new public snapshot (``TableActResult.state``,
no private part and no views), and the API that made the Update and the worker that ran it
write it to the read store (docs/read-model.md, "Act answers"). sdk-core holds a workflow
task's completion, and so the Update's answer, while a local activity is outstanding; without
one the answer leaves when the task completes. Deals, timeouts, grace, pauses, finishes and
served requests still publish durably. Decided once at each run's start
(``HandLoop.act_answers``); a tournament's table only, for now."""


LOCAL_DRAW_PATCH = "deck-local-v1"
"""A hand's deck is drawn by local activity (one marker event) instead of an activity (three
events and a workflow task of their own), and the hand's time, at which its blinds are read,
is ``workflow.now()`` where the table asks for the draw (a local activity's own time is the
worker's clock, which Temporal's time skipping does not move). The draw is no wait, so a
tournament table reads a stop in the pause between hands and at the first decision instead
(docs/durability.md, rule 9). Decided once at each run's start (``HandLoop.decide_local_draw``,
which asks the loop's later patches there too)."""


LEGAL_ONCE_PATCH = "legal-once-v1"
"""An act's legality is checked once, by its validator: the loop applies a recorded act that
answers the hand and turn the table is at without checking it again (``HandLoop.act``).
Decided once at each run's start (``HandLoop.legal_once``): a run recorded before it may hold
acts its validator of the time let through and the loop refused."""


DELIVER_PATCH = "deliver-v1"
"""The loop waits until a served request's handler took its answer before it goes on
(``Inbox.deliver``: the Update's completion is written before the loop's next command however
the inputs were batched, docs/durability.md rule 1), at a tournament's table as at a room.
Before it a tournament's table answered its sit-ins and went on (``Inbox.answer``). Asked once
at a tournament table's run start (``HandLoop.deliver``); a room always delivered."""


def _sealed_for(draw: DeckDraw, table_hand: str) -> DeckDraw:
    """The draw, once it is known to come from a worker holding the deck key (``DECK_KEY_PATCH``):
    sealed, for this table and hand. Anything else fails the workflow task (retried, visible in
    the UI) rather than deal from a secret someone else chose."""
    if workflow.patched(DECK_KEY_PATCH) and (not draw.sealed or draw.drawn_for != table_hand):
        raise RuntimeError(f"refused a deck draw not sealed for {table_hand} (docs/fairness.md)")
    return draw


def _secret_hex(sealed: str, drawn_for: str, plain: str) -> str:
    """A deck's secret (hex), opened in memory under the worker's deck key when sealed."""
    return deck_vault.current().open(sealed, drawn_for).hex() if sealed else plain


class Dealt:
    """The running hand's deck under ``deck-v2``: the committed deck, the dealing order the
    seeds gave, the seeds, and when the root was published."""

    def __init__(
        self,
        deck: fairness.CommittedDeck,
        order: list[int],
        seeds: dict[int, str],
        committed_ms: int,
    ) -> None:
        self.deck, self.order, self.seeds, self.committed_ms = deck, order, seeds, committed_ms


class Venue(Protocol):
    """What differs between a tournament's table and a cash room, as the hand loop asks it."""

    def blinds_at(self, drawn_at_ms: int) -> tuple[int, Blinds]:
        """The level and blinds of a hand whose deck was drawn then."""
        ...

    def decision_seconds(self) -> int: ...

    def dealt_seats(self) -> list[int]:
        """Who the next hand deals in."""
        ...

    def details(self) -> str:
        """Where the table is, for the Temporal UI's current details."""
        ...

    async def hand_started(self, hand: Hand) -> None: ...

    async def before_decision(self, hand: Hand) -> None:
        """Called before each decision is published and awaited."""
        ...

    async def hand_finished(self, hand: Hand, record: dict[str, Any]) -> None: ...

    async def grace(self, seat: TableSeat) -> float:
        """Extra seconds a seat whose timer fired still gets (0: apply the timeout rules)."""
        ...

    async def serve_request(self, request: object) -> object:
        """Answer a venue's own request (anything but a sit-in) from the inbox."""
        ...


class HandLoop:
    """One table's hands, actions and publications (state that must survive a
    continue-as-new lives in ``st``, the carried model)."""

    def __init__(self, st: TableState, venue: Venue, blinds: Blinds) -> None:
        """``blinds``: what the table shows before its first hand (level 0's)."""
        self.st = st
        self.venue = venue
        self.hand: Hand | None = None
        self.level, self.blinds = 0, blinds
        self.commitment: str | None = None
        self.dealt: Dealt | None = None
        self.deadline_ms: int | None = None
        self.finished = False
        # ``STOP_PATCH``: set by the table's run for the whole run; ``stopped`` once it read
        # the stop and gave up the hand (or the deal).
        self.stop_at_waits = False
        self.stopped = False
        # ``TIMEOUT_FOLD_PATCH``: set by the table's or room's run at its start, for the run.
        self.fold_second_timeout = False
        # ``GRACE_PATCH``: likewise, set by the table's or room's run at its start.
        self.stream_grace = False
        # ``ACT_ANSWER_PATCH``: likewise. ``pending_act`` is the act applied in this decision
        # whose answer waits for the next decision's snapshot (its deadline included).
        self.act_answers = False
        self.pending_act: tuple[int, TableActResult] | None = None
        # ``LOCAL_DRAW_PATCH``: likewise, set by the table's or room's run at its start.
        self.local_draw = False
        # ``LEGAL_ONCE_PATCH``: likewise.
        self.legal_once = False
        # ``DELIVER_PATCH``: a room always waits for the handler; a tournament's table's run
        # sets it at its start (runs from before the patch answer and go on).
        self.deliver = True
        # Actions waiting for the hand loop (the act handler only records them), and the
        # answers the loop gave, by intent number.
        self.intents: list[tuple[int, ActInput]] = []
        self.answers: dict[int, TableActResult | ApplicationError] = {}
        self.intent_seq = 0
        self.intents_new = False
        # The first act each seat's player sent for each turn of the running hand, as its
        # handler recorded it: only the validator reads it (a second act for that turn is
        # refused before history, security review N2), so it changes no command.
        self.acted: dict[tuple[str, int, int], ActInput] = {}
        # Every other Update (sit-in; a room's join, leave and close) waits here for the loop.
        self.inbox = Inbox()
        self.updates_this_run = 0
        # Events for the next publication (a room's stream), in the order they were queued.
        self.events: list[EventInput] = []
        self.events_lock = asyncio.Lock()
        # The table version the read store last got from this run (docs/read-model.md); a
        # new run publishes its first version again, which the store takes as a no-op.
        self.published_version = -1

    def decide_local_draw(self) -> None:
        """``LOCAL_DRAW_PATCH``, asked once at a run's start; a run that draws by local
        activity also asks here every patch the loop would first ask right after a draw
        (``deck-key-v1``, ``deck-v2``) or later in a hand (``read-model-v1``,
        ``record-players-v1``), so that none of their markers is written after a draw.

        Why: a draw that outlasts its workflow task (a slow vault, a worker killed mid-draw)
        is heartbeated into later tasks, and when the next worker's draw resolves there and a
        patch is asked right after it, sdk-core replays that history with the patch's marker
        seen before the draw resolved ("Non-deprecated patch marker encountered for change
        deck-key-v1, but there is no corresponding change command",
        tests/integration/test_deck_draw.py). Asked at the start, each is memoized for the
        run and writes nothing later. Runs from before the patch ask them where they did."""
        self.local_draw = workflow.patched(LOCAL_DRAW_PATCH)
        if self.local_draw:
            for patch in (DECK_KEY_PATCH, DECK_PATCH, READ_MODEL_PATCH, RECORD_PLAYERS_PATCH):
                workflow.patched(patch)

    # -- one hand ------------------------------------------------------------------------
    async def play_hand(self) -> int | None:
        """Deal and play one hand; return its number if a stop aborted it (stacks restored)."""
        hand_no = self.st.hand_no + 1
        draw = await self._draw(f"{self.st.table_id}:{hand_no}")
        if draw is None:
            return None  # stopped while the deck was drawn: no hand
        live = self.venue.dealt_seats()
        if len(live) < 2:
            return None  # a room player left while the seed was drawn: no hand after all
        positions = self._positions(live)
        # The deal time is the draw's recorded time, so a replay reads the same blinds.
        self.level, self.blinds = self.venue.blinds_at(draw.drawn_at_ms)
        seed_hex = ""  # revealed after the hand by tables dealing as before deck-v2
        if workflow.patched(DECK_PATCH):
            committed = await self._deal_committed(hand_no, draw, live)
            if committed is None:
                return None
            cards = committed
        else:
            self.dealt = None
            seed_hex = _secret_hex(draw.sealed, draw.drawn_for, draw.seed)
            cards = decks.shuffled_deck(bytes.fromhex(seed_hex))
            self.commitment = decks.commitment(bytes.fromhex(seed_hex))
        hand = start_hand(
            seat_count=self.st.seat_count,
            positions=positions,
            stacks={s.seat: s.stack for s in self.st.seats if s.seat in live},
            small_blind=self.blinds.sb,
            big_blind=self.blinds.bb,
            ante=self.blinds.ante,
            ante_mode=AnteMode.EVERY_PLAYER if self.blinds.ante else AnteMode.NONE,
            deck=cards,
        )
        self.hand = hand
        self.acted = {}
        self.st.hand_no = hand_no
        self.st.positions = positions.to_dict()
        self.bump()
        await self.venue.hand_started(hand)

        # Histories from before the read model read a stop at the top of every turn.
        legacy_stop = not workflow.patched(READ_MODEL_PATCH)
        while not hand.over:
            if legacy_stop and self.st.stop_requested:
                return self._void_hand(hand_no)
            seat = hand.actor_seat
            assert seat is not None
            table_seat = self.seat(seat)
            auto = table_seat.sitting_out or table_seat.leaving
            # The seat's deadline goes out with the state the room's stream publishes first.
            self.deadline_ms = (
                None if auto else self.now_ms() + self.venue.decision_seconds() * 1000
            )
            await self.venue.before_decision(hand)
            if auto:
                self._auto_act(hand, seat, "leaving" if table_seat.leaving else "sitting_out")
                continue
            if await self._decision(hand, table_seat):  # only under ``stop_at_waits``
                self.stopped = True
                return self._void_hand(hand_no)
            # Before ``STOP_PATCH``, a stop is read here only, once a decision has begun (its
            # publication and its timer are out): whether it came with the input before or
            # after, the commands are the same (docs/durability.md, rule 8). A hand that the
            # decision finished is finished, as before.
            if (
                not self.stop_at_waits
                and not legacy_stop
                and self.st.stop_requested
                and not hand.over
            ):
                return self._void_hand(hand_no)

        self.answer_stale_intents()
        await self._finish_hand(hand, seed_hex)
        return None

    async def _draw(self, table_hand: str) -> DeckDraw | None:
        """A deck draw; under ``STOP_PATCH`` None instead when a stop came while it ran. The
        draw's result is taken first when both came: a stop that came after it found the
        hand dealt and its first decision begun (docs/durability.md, rule 9)."""
        if self.local_draw:
            return await self._draw_locally(table_hand)
        if not self.stop_at_waits:
            return _sealed_for(await effects.draw_deck(table_hand), table_hand)
        draw = effects.start_draw_deck(table_hand)
        await workflow.wait_condition(lambda: draw.done() or self.st.stop_requested)
        if draw.done():
            return _sealed_for(await draw, table_hand)
        self.stopped = True
        return None

    async def _draw_locally(self, table_hand: str) -> DeckDraw:
        """``LOCAL_DRAW_PATCH``: the draw by local activity, stamped with the time the table
        asked for it (``workflow.now()``: the workflow task's start on Temporal's clock, the
        same on replay; the local activity's own time is the worker's clock).

        A stop is not read here: the draw runs inside the workflow task that asked for it
        (sdk-core holds the task until it resolves), so it is no wait, and a stop that came
        with that task's input or during the draw is read at the hand's first decision, which
        voids the hand, or in the pause before the next draw (``pause_between_hands``;
        docs/durability.md, rules 4 and 9). The commands are then the same whether the stop
        came with the task that drew or after it."""
        drawn_at_ms = self.now_ms()
        draw = _sealed_for(await effects.local_draw_deck(table_hand), table_hand)
        return draw.model_copy(update={"drawn_at_ms": drawn_at_ms})

    async def _deal_committed(
        self, hand_no: int, draw: DeckDraw, live: list[int]
    ) -> list[str] | None:
        """The cards this hand deals (``deck-v2``): the deck committed a hand ahead, in the
        order the dealt seats' seeds fix. The secret just drawn becomes the next hand's deck,
        whose root goes out with the next publication; seeds for it are taken until it is
        dealt (``take_seed``). A table's first hand had no root out before it: it is dealt
        from the secret just drawn, with no seeds, and a second draw commits the next."""
        pending = self.st.next_deck
        if pending is None or pending.hand_number != hand_no:
            pending = self._pending(hand_no, draw)
            second = await self._draw(f"{self.st.table_id}:{hand_no + 1}")
            if second is None:
                return None
            draw = second
        deck = fairness.commit(
            bytes.fromhex(_secret_hex(pending.sealed, pending.drawn_for, pending.secret))
        )
        seeds = {seat: seed for seat, seed in pending.seeds.items() if seat in live}
        cards, order = fairness.dealt_deck(
            deck, {seat: bytes.fromhex(seed) for seat, seed in seeds.items()}
        )
        self.dealt = Dealt(deck, order, seeds, pending.committed_ms)
        self.commitment = deck.root_hex
        self.st.next_deck = self._pending(hand_no + 1, draw)
        return cards

    def _pending(self, hand_number: int, draw: DeckDraw) -> PendingDeck:
        """The next deck, its secret kept sealed (plain only from draws made before the deck
        key, core/deck_vault.py) and opened here just to publish its root."""
        secret_hex = _secret_hex(draw.sealed, draw.drawn_for, draw.seed)
        return PendingDeck(
            hand_number=hand_number,
            secret="" if draw.sealed else secret_hex,
            sealed=draw.sealed,
            drawn_for=draw.drawn_for,
            root=fairness.commit(bytes.fromhex(secret_hex)).root_hex,
            committed_ms=self.now_ms(),  # a stamp for the record, never a decision
        )

    def _void_hand(self, hand_no: int) -> int:
        """A stop abandons the running hand: stacks stay as they were before it."""
        self.hand = None
        self.dealt = None
        self.answer_stale_intents()
        self.bump()
        return hand_no

    async def _decision(self, hand: Hand, table_seat: TableSeat) -> bool:
        """Wait for the seat to act, or apply the timeout rules when its timer fired; True
        when it gave up for a stop instead (``stop_at_waits``).

        Recorded actions are applied before a fired timer: an action for this turn that
        reached the table with its timeout wins, and one for a later turn (its player saw the
        timeout applied) waits until the timeout has moved the hand there. Either way the
        outcome depends on what arrived, not on how the SDK batched it. A stop comes last
        (``STOP_PATCH``): it is read only when neither an action nor the timer moved the hand,
        since a stop that came after them found the next decision already begun.
        """
        turn = hand.turn
        # Publish once per decision, before its timer and before any recorded action is
        # applied (and once per served request, in ``serve``): how many publications a hand
        # makes then depends on the decisions and requests, never on how the SDK batched
        # them (docs/durability.md, rule 8). The deadline was set by the hand loop.
        await self.flush()
        alarm = await Alarm.start(
            timedelta(seconds=self.venue.decision_seconds()),
            f"decision timeout seat {table_seat.seat}",
        )
        graced = False
        try:
            while True:
                self._apply_intents(hand)
                if hand.turn != turn or table_seat.leaving:
                    return False
                if self.st.stop_requested and not self.stop_at_waits:
                    return False
                if alarm.fired:
                    # Whole milliseconds (a room's grace for lapsed polling is whole seconds,
                    # so its timer is the one it always was).
                    extra_ms = 0 if graced else int(await self.venue.grace(table_seat) * 1000)
                    if extra_ms > 0:
                        graced = True
                        alarm = await Alarm.start(
                            timedelta(milliseconds=extra_ms),
                            f"disconnect grace seat {table_seat.seat}",
                        )
                        self.deadline_ms = self.now_ms() + extra_ms
                        if self.stream_grace:  # shown in the seat (``graceUntil``)
                            table_seat.grace_until = self.deadline_ms
                        self.bump()  # the new deadline reaches the read store
                        await self.flush()
                        continue
                    self._on_timeout(hand, table_seat.seat)
                    return False
                if self.st.stop_requested:
                    return True
                await wait_or_serve(
                    lambda alarm=alarm: (  # type: ignore[misc]
                        self.intents_new
                        or alarm.fired
                        or self.st.stop_requested
                        or table_seat.leaving
                    ),
                    self.inbox,
                    self.serve,
                )
        finally:
            alarm.cancel()
            self.deadline_ms = None
            # The decision is over (acted, timed out, or abandoned): no grace is held.
            table_seat.disconnected_at = table_seat.grace_until = None

    async def pause_between_hands(self) -> None:
        """A short pause so players can read the result. Only its timer ends it (or, from
        ``LOCAL_DRAW_PATCH`` at a tournament's table, a stop that came before the timer
        fired: then ``stopped``); requests (sit-in, a room's join, leave, close) are served
        meanwhile, and a stop that arrives with the firing is read after it, so what the
        table does next never depends on which of the two a task delivered first."""
        alarm = await Alarm.start(
            timedelta(milliseconds=self.st.hand_pause_ms), "pause between hands"
        )
        await self.flush()  # the finished hand (each served request publishes its own)
        # ``LOCAL_DRAW_PATCH`` with ``stop_at_waits``: the next draw is no wait, so the pause
        # is where a hand boundary reads a stop, as the last input: only while its timer has
        # not fired (a stop that came with the firing or after it is read at the next
        # hand's first decision, docs/durability.md rule 9). Without this a table whose
        # seats all sit out (no decision) would read a stop only at its continue-as-new.
        stops = self.local_draw and self.stop_at_waits
        while not await wait_or_serve(
            lambda: alarm.fired or (stops and self.st.stop_requested), self.inbox, self.serve
        ):
            pass
        if stops and not alarm.fired:
            alarm.cancel()
            self.stopped = True

    def run_budget_spent(self, update_budget: int = UPDATE_BUDGET) -> bool:
        """Time for a fresh run at this hand boundary (workflows/budget.py). No-ops are
        refused by the validators, and so is a second act for one turn, so one hand accepts
        at most an action or a sit-in per turn, and a seed and a leave per dealt seat; a
        room's joins and leaves stop at ``update_budget`` within a hand too (docs/rooms.md,
        "The run's Update budget")."""
        return run_budget_spent(self.updates_this_run, update_budget)

    async def serve(self, number: int, request: object) -> None:
        """Answer one request the loop took from the inbox (a coded refusal is an answer)."""
        answer: object
        try:
            if isinstance(request, SitInInput):
                answer = self._take_sit_in(request)
            else:
                answer = await self.venue.serve_request(request)
        except ApplicationError as err:
            answer = err
        if self.deliver:
            await self.inbox.deliver(number, answer)
        else:
            self.inbox.answer(number, answer)
        # Each served request publishes what it changed, so the publications follow the
        # requests, not how many of them one wake-up found (docs/durability.md, rule 8).
        await self.flush()

    async def serve_until_handlers_finished(self) -> None:
        """Right before continue-as-new or completion: answer whatever still waits."""
        while not workflow.all_handlers_finished():
            await wait_or_serve(workflow.all_handlers_finished, self.inbox, self.serve)

    def _apply_intents(self, hand: Hand) -> None:
        """Apply the first recorded action that is legal now; keep those for a later turn of
        this hand; refuse the rest with the code the validator would give.

        One action per decision: the next turn gets its own timer, as it would have had if
        the two actions had come in separate tasks (Temporal checks the timers' ids).
        """
        self.intents_new = False
        for intent in list(self.intents):
            number, inp = intent
            seat = self._verified_here(hand, inp)
            if seat is None:
                try:
                    seat = self.verify_act(inp)
                except ApplicationError as err:
                    if inp.hand_no == self.st.hand_no and inp.turn > hand.turn and not hand.over:
                        continue  # the hand may yet get there (a timeout in the same task)
                    self.intents.remove(intent)
                    self.answers[number] = err
                    continue
            self.intents.remove(intent)
            result = self._apply_act(hand, seat, inp)
            if self.act_answers:
                # Answered with the snapshot the next decision starts from (``flush``), or,
                # if the hand ends first, the snapshot it ends with (``answer_stale_intents``).
                self.pending_act = (number, result)
                if hand.over:
                    self._answer_pending_act()
            else:
                self.answers[number] = result
            return

    def _verified_here(self, hand: Hand, inp: ActInput) -> int | None:
        """``LEGAL_ONCE_PATCH``: the seat of an act its validator verified against the state
        the hand is in now, or None (then the loop checks it, ``verify_act``).

        The validator accepts an act only for the hand and turn the table is at, from the
        seat to act, and checks its legality there; a hand's state at a turn is fixed by the
        actions before it (a sit-in, a grace or a publication changes no betting). So an act
        that still answers this hand and turn, for the seat to act, was verified against
        this very state. The loop decides from replayed state and the act's own data only,
        never from what the validator saw, so a replay (no validator) decides the same. An
        act that answers another turn than the table's (one a timeout overtook, or one
        recorded in a task with the timeout before it, as the worker-death anomaly writes)
        is checked, kept or refused by ``verify_act`` as before."""
        if not self.legal_once or hand.over:
            return None
        if inp.hand_no != self.st.hand_no or inp.turn != hand.turn:
            return None
        seat = next((s.seat for s in self.st.seats if s.player_id == inp.player_id), None)
        return seat if seat is not None and seat == hand.actor_seat else None

    def _answer_pending_act(self) -> None:
        """Give the act applied last its answer: the table as it is now, public part only."""
        if self.pending_act is None:
            return
        number, result = self.pending_act
        self.pending_act = None
        result.state = self.snapshot(private=False)
        result.version = self.st.version
        self.answers[number] = result

    def answer_stale_intents(self) -> None:
        """Between hands nothing recorded can still be legal: refuse what is left (and answer
        the act that ended the hand, ``ACT_ANSWER_PATCH``)."""
        self._answer_pending_act()
        for number, inp in self.intents:
            try:
                self.verify_act(inp)
                raise AssertionError("an action cannot be legal between hands")
            except ApplicationError as err:
                self.answers[number] = err
        self.intents = []
        self.intents_new = False

    def _positions(self, live: list[int]) -> ButtonPositions:
        if self.st.positions is None:
            # The first button is drawn; replay-safe, and nothing to do with the deck.
            return first_positions(live, self.st.seat_count, workflow.random().choice(live))
        previous = ButtonPositions.from_dict(self.st.positions)
        return next_positions(previous, live, self.st.seat_count)

    def _on_timeout(self, hand: Hand, seat: int) -> None:
        """The timeout rules (``domain.holdem.timeouts``): the first timeout checks if free,
        else folds; the second in a row folds and sits the player out. Runs from before
        ``TIMEOUT_FOLD_PATCH`` checked on the second one too where a check was free."""
        table_seat = self.seat(seat)
        table_seat.timeouts += 1
        if not self.fold_second_timeout:
            if table_seat.timeouts >= 2:
                table_seat.sitting_out = True
            self._auto_act(hand, seat, "timeout")
            return
        penalty = timeout_penalty(
            table_seat.timeouts, can_check=hand.can_act(seat, ActionKind.CHECK)
        )
        if penalty.sits_out:
            table_seat.sitting_out = True
        self._auto_act(hand, seat, "timeout", penalty.action)

    def _auto_act(
        self, hand: Hand, seat: int, reason: str, action: ActionKind | None = None
    ) -> None:
        """Act for a player who did not decide: ``action``, or else check if free, else fold
        (``sitting_out_action``); the action's log entry says so (``auto``: ``timeout``,
        ``sitting_out`` or ``leaving``), in the hand's record, its history and every view of
        the hand."""
        if action is None:
            action = sitting_out_action(can_check=hand.can_act(seat, ActionKind.CHECK))
        if action is ActionKind.CHECK:
            hand.act(seat, ActionKind.CHECK)["auto"] = reason
        else:
            # The table's fold: allowed where a check is free too (a player's own is not).
            hand.fold_out(seat)["auto"] = reason
            self.st.auto_folds += 1
            # Replay-safe: the SDK's workflow meter records nothing while replaying. The
            # worker exports it with its runtime metrics (SNG_WORKER_METRICS_ADDRESS).
            workflow.metric_meter().create_counter(
                "sng_auto_folds", "Folds the table made for a player whose timer ran out"
            ).add(1)
        self.bump()

    async def _finish_hand(self, hand: Hand, seed_hex: str) -> None:
        dealt_only = workflow.patched(RECORD_PLAYERS_PATCH)
        record = hand_record(hand)
        record.update(
            {
                "table_id": self.st.table_id,
                "hand_no": self.st.hand_no,
                "level": self.level,
                "small_blind": self.blinds.sb,
                "big_blind": self.blinds.bb,
                "ante": self.blinds.ante,
                # Who was dealt in: a room's player who sat down during the hand is not (nor,
                # from the patch on, a busted tournament seat).
                "players": {
                    str(s.seat): s.player_id
                    for s in self.st.seats
                    if s.seat in hand.seats or not dealt_only
                },
                "deck_commitment": self.commitment,
            }
        )
        if self.dealt is None:
            record["deck_seed"] = seed_hex
        else:
            self._reveal_only_what_was_shown(hand, record, self.dealt)
            self.dealt = None  # the deck's secret (in memory only) is not kept past its hand
        stacks_after = {int(seat): chips for seat, chips in record["stacks_after"].items()}
        for table_seat in self.st.seats:
            if table_seat.seat in stacks_after:
                table_seat.stack = stacks_after[table_seat.seat]
        self.st.last_hand = {
            key: record[key]
            for key in (
                "hand_no",
                "board",
                "shown",
                "pots",
                "stacks_after",
                "busted",
                "deck_commitment",
                "deck_seed",
                "deck",
                "prev_hash",
                "hash",
            )
            if key in record
        }
        self.bump()
        await self.venue.hand_finished(hand, record)

    def _reveal_only_what_was_shown(self, hand: Hand, record: dict[str, Any], dealt: Dealt) -> None:
        """Under ``deck-v2`` the record shows the board and the hands shown down, with their
        openings, and links to the table's last record; each seat's own hole cards and their
        openings go in ``private`` (sealed for that seat when stored, never served to anyone
        else). Nothing reveals the deck's secret, a folded hand or an undealt card."""
        record["private"] = fairness.publish(
            record,
            dealt.deck,
            dealt.order,
            seats=hand.seats,
            seeds=dealt.seeds,
            committed_ms=dealt.committed_ms,
            prev_hash=self.st.chain_head,
            served=lambda r: HandRecord.model_validate(r).to_wire(),
        )
        self.st.chain_head = record["hash"]

    # -- the players' Updates (the workflows' handlers call these) ----------------------------
    async def act(self, inp: ActInput) -> TableActResult:
        """Record the action; the hand loop applies it (``_apply_intents``) and answers.

        Legality is checked once per action on the normal path (``LEGAL_ONCE_PATCH``): the
        validator (``verify_new_act``) checks it against the hand and turn the table is at;
        the loop applies an act that still answers that hand and turn, for the seat to act,
        without a second check (``_verified_here``), and the engine applies it without a
        third (``Hand.act_verified``). Only an act the table moved past since (a timeout in
        the same task, a recording where the acceptance came with the timer) is checked
        again by the loop, and refused or kept for its turn as before (durability rule 3).
        Runs from before the patch check in the loop every time, as they did."""
        self.updates_this_run += 1
        self.acted.setdefault((inp.player_id, inp.hand_no, inp.turn), inp)
        self.intent_seq += 1
        number = self.intent_seq
        self.intents.append((number, inp))
        self.intents_new = True
        await workflow.wait_condition(lambda: number in self.answers)
        answer = self.answers.pop(number)
        if isinstance(answer, ApplicationError):
            raise answer
        return answer

    def _apply_act(self, hand: Hand, seat: int, inp: ActInput) -> TableActResult:
        # Verified against this state already (the validator, or the loop's ``verify_act``
        # just now): the engine does not check it a third time.
        hand.act_verified(seat, inp.action, inp.amount)
        table_seat = self.seat(seat)
        table_seat.timeouts = 0
        table_seat.sitting_out = False
        self.bump()
        if self.act_answers:
            # The snapshot comes with the answer (``_answer_pending_act``), built once.
            return TableActResult(
                version=self.st.version, hand_number=self.st.hand_no, turn=hand.turn
            )
        snapshot = self.snapshot()
        return TableActResult(
            version=self.st.version,
            hand_number=self.st.hand_no,
            turn=hand.turn,
            actor_view=seat_view(snapshot, inp.player_id, snapshot.private.get(inp.player_id)),
            spectator_view=snapshot.view,
        )

    def verify_act(self, inp: ActInput) -> int:
        try:
            seat = self.seat_of(inp.player_id)
            hand = self.hand
            if hand is None or hand.over:
                raise DomainError(ErrorCode.STALE_TURN, "no hand is waiting for an action")
            if hand.actor_seat != seat:
                raise DomainError(ErrorCode.NOT_YOUR_TURN, "it is not your turn")
            if inp.hand_no != self.st.hand_no or inp.turn != hand.turn:
                raise DomainError(
                    ErrorCode.STALE_TURN,
                    f"that answers hand {inp.hand_no} turn {inp.turn}; the table is at hand"
                    f" {self.st.hand_no} turn {hand.turn}",
                )
            hand.verify_action(seat, inp.action, inp.amount)
        except DomainError as err:
            raise refusal(err) from None
        return seat

    def verify_new_act(self, inp: ActInput) -> None:
        """The act validator's checks: ``verify_act``, and one action per seat and turn
        (security review N2). Only a validator calls it, and validators never replay, so it
        may read what the handlers recorded (``acted``); the loop's own re-check
        (``verify_act``) is unchanged.

        Several acts for one turn can reach the validators in one workflow task, before the
        loop applied the first: the first one's handler records it, so the next is refused
        here (``already_acted``) instead of being accepted into history and refused by the
        loop. The same ``Idempotency-Key`` with another action or amount for that turn is
        refused whenever it comes (``idempotency_key_reused``); with the same action it
        carries the same Update id, so Temporal answers it with the first outcome."""
        prior = self.acted.get((inp.player_id, inp.hand_no, inp.turn))
        if (
            prior is not None
            and inp.key is not None
            and prior.key == inp.key
            and (prior.action, prior.amount) != (inp.action, inp.amount)
        ):
            raise refusal(
                DomainError(
                    ErrorCode.IDEMPOTENCY_KEY_REUSED,
                    f"that Idempotency-Key already sent {prior.action} for hand {inp.hand_no}"
                    f" turn {inp.turn}; nothing was applied",
                )
            )
        self.verify_act(inp)
        self._verify_raise_cap(inp)
        if prior is not None:
            raise refusal(
                DomainError(
                    ErrorCode.ALREADY_ACTED,
                    f"you already acted on hand {inp.hand_no} turn {inp.turn}; that action stands",
                )
            )

    def _verify_raise_cap(self, inp: ActInput) -> None:
        """At most ``RAISES_PER_ROUND`` raises in one betting round, all-ins apart (independent
        review of N2: two seats with deep stacks min-raising each other could spend the run's
        2,000 Updates within one hand, and then an opponent's act is refused). A house rule,
        checked in the validator only (never replayed): past it a player calls, folds or goes
        all-in, so a hand takes at most ``(RAISES_PER_ROUND + seats + 1) × seats`` acts a
        round, 1,240 for ten seats, inside the 1,500 the room's join and leave budget leaves."""
        hand = self.hand
        if hand is None or str(inp.action) != "raise":
            return
        street = STREETS[hand.street]
        raises = sum(
            1
            for a in hand.actions
            if a["street"] == street and a["action"] == "raise" and not a["all_in"]
        )
        seat = self.seat_of(inp.player_id)
        player = hand.seats.index(seat)
        if raises >= RAISES_PER_ROUND and inp.amount != hand.stacks[player] + hand.bets[player]:
            raise refusal(
                DomainError(
                    ErrorCode.ILLEGAL_ACTION,
                    f"this betting round had {RAISES_PER_ROUND} raises: call, fold or go"
                    " all-in (docs/rooms.md, the raise cap)",
                )
            )

    def verify_seed(self, inp: SeedInput) -> int:
        """A seed answers the next hand's committed root, from a seated player, once."""
        try:
            seat = self.seat_of(inp.player_id)
            pending = self.st.next_deck
            if pending is None:
                raise DomainError(
                    ErrorCode.INVALID_STATE, "this table has no deck committed for its next hand"
                )
            if inp.hand_number == pending.hand_number and seat in pending.seeds:
                # First: whatever else this request gets wrong, the seat's seed is in.
                raise DomainError(
                    ErrorCode.ALREADY_SEEDED, f"seat {seat} already seeded hand {inp.hand_number}"
                )
            if inp.hand_number != pending.hand_number or inp.commitment.lower() != pending.root:
                raise DomainError(
                    ErrorCode.STALE_COMMITMENT,
                    f"that seed answers hand {inp.hand_number}'s deck {inp.commitment!r}; the"
                    f" next hand is {pending.hand_number}, committed to {pending.root}",
                    field="commitment",
                )
            fairness.check_player_seed(inp.seed)
        except DomainError as err:
            raise refusal(err) from None
        return seat

    def take_seed(self, inp: SeedInput) -> SeedResult:
        """Record the seed in the pending deck: the deal reads it there (handlers record,
        the loop acts). No version bump: what the loop publishes, and when, stays the
        loop's (docs/durability.md, rule 8); the next publication shows the seat seeded."""
        seat = self.verify_seed(inp)
        pending = self.st.next_deck
        assert pending is not None
        self.updates_this_run += 1
        pending.seeds[seat] = inp.seed.lower()
        return SeedResult(hand_number=pending.hand_number, commitment=pending.root, seat=seat)

    async def sit_in(self, inp: SitInInput) -> ActResult:
        self.updates_this_run += 1
        result: ActResult = await self.inbox.ask(inp)
        return result

    def _take_sit_in(self, inp: SitInInput) -> ActResult:
        table_seat = self.seat(self.checked_seat_of(inp.player_id))
        table_seat.sitting_out = False
        table_seat.timeouts = 0
        table_seat.sat_out_hands = 0
        self.bump()
        return ActResult(
            version=self.st.version,
            hand_number=self.st.hand_no,
            turn=self.hand.turn if self.hand else 0,
        )

    def verify_sit_in(self, inp: SitInInput) -> None:
        table_seat = self.seat(self.checked_seat_of(inp.player_id))
        if not (table_seat.sitting_out or table_seat.timeouts or table_seat.sat_out_hands):
            # A no-op: refused before history, so sit-ins cannot spend the run's Update
            # budget and starve the other players' actions (security review H3).
            raise refusal(DomainError(ErrorCode.INVALID_STATE, "you are not sitting out"))

    # -- what the table shows ------------------------------------------------------------
    def snapshot(self, *, private: bool = True) -> TableSnapshot:
        """The table now as the read store keeps it: the spectators' view, the actor's legal
        actions, and (``private``) each seat's private part while a hand runs."""
        hand = self.hand
        parts: dict[str, list[str]] = {}
        if hand is not None and private:
            players = {s.seat: s.player_id for s in self.st.seats}
            parts = {
                players[seat]: cards
                for seat, cards in private_parts(hand).items()
                if seat in players
            }
        return TableSnapshot(
            key=workflow.info().workflow_id,
            view=self._spectator_view(),
            legal=actor_legal(hand) if hand is not None and not hand.over else None,
            private=parts,
        )

    def view(self, viewer: str | None) -> TableView:
        snapshot = self.snapshot()
        return seat_view(snapshot, viewer, snapshot.private.get(viewer or ""))

    def _spectator_view(self) -> TableView:
        return TableView(
            table_id=self.st.table_id,
            tournament_id=self.st.tournament_id,
            hand_no=self.st.hand_no,
            level=self.level,
            small_blind=self.blinds.sb,
            big_blind=self.blinds.bb,
            ante=self.blinds.ante,
            seats=[s.model_copy() for s in self.st.seats],
            hand=public_view(self.hand, None) if self.hand is not None else None,
            deck_commitment=self.commitment,
            last_hand=self.st.last_hand,
            next_deck=(
                NextDeck(
                    hand_number=self.st.next_deck.hand_number,
                    commitment=self.st.next_deck.root,
                    seeded=sorted(self.st.next_deck.seeds),
                )
                if self.st.next_deck is not None
                else None
            ),
            chain_head=self.st.chain_head,
            finished=self.finished,
            version=self.st.version,
            # Who left the room lately is the join cooldown's, not the table's to show.
            room=self.st.room.model_copy(update={"departures": {}}) if self.st.room else None,
            deadline_ms=self.deadline_ms,
        )

    async def flush(self) -> None:
        """Publish what is new: the queued events and the table's newest version (the
        pushed read model), in one local activity. Only the main loop calls it, before it
        waits, so what it publishes depends on the loop alone (docs/durability.md)."""
        async with self.events_lock:  # batches reach the log in the order they were queued
            batch, self.events = self.events, []
            changed = self.st.version != self.published_version
            if not batch and not changed:
                return
            # Histories from before the read model published events only (and nothing at a
            # tournament table): they replay that way.
            if not workflow.patched(READ_MODEL_PATCH):
                if batch:
                    await effects.publish_room_events(batch)
                return
            hand = self.hand
            if self.pending_act is not None and not batch and hand is not None and not hand.over:
                # ``ACT_ANSWER_PATCH``: the act's answer carries this version; its writers
                # publish it. Nothing here awaits, so the Update answers when the task ends.
                self._answer_pending_act()
                self.published_version = self.st.version
                return
            self._answer_pending_act()  # anything else changed too: published durably as well
            self.published_version = self.st.version
            await effects.publish_table(
                TablePublication(events=batch, state=self.snapshot() if changed else None)
            )

    # -- seats ---------------------------------------------------------------------------
    def live_seats(self) -> list[int]:
        return [s.seat for s in self.st.seats if s.stack > 0]

    def seat(self, seat: int) -> TableSeat:
        return next(s for s in self.st.seats if s.seat == seat)

    def seat_of(self, player_id: str) -> int:
        for s in self.st.seats:
            if s.player_id == player_id:
                return s.seat
        raise DomainError(ErrorCode.UNKNOWN_SEAT, "you have no seat at this table")

    def checked_seat_of(self, player_id: str) -> int:
        try:
            return self.seat_of(player_id)
        except DomainError as err:
            raise refusal(err) from None

    def now_ms(self) -> int:
        return int(workflow.now().timestamp() * 1000)

    def bump(self) -> None:
        self.st.version += 1
        hand = self.hand
        actor = hand.actor_seat if hand is not None and not hand.over else None
        workflow.set_current_details(
            f"hand {self.st.hand_no}, {self.venue.details()} ({self.blinds.sb}/{self.blinds.bb}), "
            + (f"seat {actor} to act" if actor is not None else "between hands")
        )


class PlayerHandlers:
    """The Updates and the query a player's seat has at either table workflow."""

    table: HandLoop

    @property
    def seen_updates(self) -> dict[str, int]:
        """The Update ids taken lately, carried across continue-as-new (core/handler_binding)."""
        return self.table.st.seen_updates

    @workflow.update
    async def act(self, inp: ActInput) -> TableActResult:
        """Record the action; the hand loop applies it and answers."""
        return await self.table.act(inp)

    @act.validator
    def _validate_act(self, inp: ActInput) -> None:
        self.table.verify_new_act(inp)

    @workflow.update
    async def sit_in(self, inp: SitInInput) -> ActResult:
        return await self.table.sit_in(inp)

    @workflow.update
    def seed(self, inp: SeedInput) -> SeedResult:
        """A player's entropy for the next hand's deal (docs/fairness.md)."""
        return self.table.take_seed(inp)

    @seed.validator
    def _validate_seed(self, inp: SeedInput) -> None:
        self.table.verify_seed(inp)

    @sit_in.validator
    def _validate_sit_in(self, inp: SitInInput) -> None:
        self.table.verify_sit_in(inp)

    @workflow.query
    def view(self, viewer: str | None = None) -> TableView:
        """For operators and debugging: players read the published state (docs/read-model.md),
        composed the same way (``seat_view``)."""
        return self.table.view(viewer)
