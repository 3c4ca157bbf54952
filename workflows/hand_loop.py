"""The hand loop both table workflows compose: deal No-Limit Hold'em hands at one table.

`HandLoop` runs the turns: it starts each hand with the cards its dealer deals
(workflows/dealer.py), waits for each decision, applies the players' recorded actions (every
rule comes from the engine in ``domain/holdem``) and the timeout rules, and serves the
requests its Updates leave for it; its publisher (workflows/publisher.py) builds what the
table shows and publishes it to the read store. Where it runs is a `Venue`: a tournament's
table (workflows/table.py: blinds from the level clock, reports to the tournament) or a cash
room (workflows/room.py: fixed stakes, join and leave, an event stream, a ledger settlement
per hand). The venue answers the few questions that differ; the loop calls it at fixed
points, and the venue changes the loop only through its narrow interface: ``ask`` (an Update
for the loop to serve), ``queue`` (a stream event), ``changed`` (a new table version),
``finish``, ``flush`` and ``wait_or_serve``. The determinism rules it keeps are in
docs/durability.md.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.blinds import Blinds
    from domain.errors import DomainError, ErrorCode
    from domain.holdem import (
        ActionKind,
        AnteMode,
        ButtonPositions,
        Hand,
        first_positions,
        hand_record,
        next_positions,
        start_hand,
    )
    from domain.holdem.timeouts import grace_allowed, sitting_out_action, timeout_penalty
    from wire.messages import EventInput
    from wire.table_messages import (
        ActInput,
        ActResult,
        HandLoopState,
        SeedInput,
        SeedResult,
        SitInInput,
        TableActResult,
        TableSeat,
        TableView,
    )
    from workflows.actions import LEGAL_ONCE_PATCH, Actions
    from workflows.alarm import Alarm
    from workflows.budget import UPDATE_BUDGET, run_budget_spent
    from workflows.dealer import DECK_KEY_PATCH, DECK_PATCH, LOCAL_DRAW_PATCH, Dealer
    from workflows.errors import refusal
    from workflows.inbox import Inbox, wait_or_serve
    from workflows.publisher import ACT_ANSWER_PATCH, READ_MODEL_PATCH, Publisher

HANDS_PER_RUN = 20
"""Continue-as-new at least this often: ~20 hands stay far below 2,000 updates and 10,000
events per run (an accepted action costs about 6.4 table events over whole hands, its share
of the hand's one decision timer included; about 8.2 when every decision cancelled its timer
and started one, before ``KEPT_TIMER_PATCH``: tests/integration/test_decision_timer.py prints
the figure, 3 players, 4 hands)."""

RECORD_PLAYERS_PATCH = "record-players-v1"
"""A hand record's ``players`` are the seats dealt in (before: every seat at the table)."""

STOP_PATCH = "stop-at-waits-v1"
"""A tournament table reads a stop only where it waits with nothing else to take: in a
decision, after the actions and the fired timer it was handed with, and after a hand's deck
draw (docs/durability.md, rule 9)."""

TIMEOUT_FOLD_PATCH = "timeout-fold-v1"
"""The second decision timeout in a row folds the player (and sits them out) even where a
check is legal (seed 004, "Decision timeouts"); before it, such a timeout checked. Decided
once at each run's start (``HandLoop.begin_run``)."""


GRACE_BUDGET_PATCH = "grace-budget-v1"
"""A seat gets the disconnect grace in at most one hand of every ``GRACE_EVERY_HANDS``
(security review 3, S6: the grace renewed on every decision, so a staller was never timed
out). Before it every decision could get it. Decided once at each run's start."""

GRACE_PATCH = "stream-grace-v1"
"""The disconnect grace is measured from the player's stream drop, which the API records
(seed 004; docs/rooms.md): a seat whose decision timer runs out while its stream has been
down for less than ``disconnectGrace`` is held until drop + grace, at a room and at a
tournament's table alike. Before it a room gave the grace only to lapsed polling, and a
tournament's table none. Decided once at each run's start (``HandLoop.begin_run``)."""


DELIVER_PATCH = "deliver-v1"
"""The loop waits until a served request's handler took its answer before it goes on
(``Inbox.deliver``: the Update's completion is written before the loop's next command however
the inputs were batched, docs/durability.md rule 1), at a tournament's table as at a room.
Before it a tournament's table answered its sit-ins and went on (``Inbox.answer``). Asked once
at a tournament table's run start (``HandLoop.begin_run``); a room always delivered."""


KEPT_TIMER_PATCH = "decision-timer-kept-v1"
"""One decision timer per hand, kept across decisions (``HandLoop._decision``): a decision
taken before the timer fires leaves it running, and when it fires for a decision that is over,
the table arms it again for the remaining time of the one in progress. Before it every
decision cancelled its timer and started one: two commands and two history events per action
(issue 30). Which decision a firing times out is decided only by the (hand, turn) the timer
was armed for (``HandLoop.timer_for``), never by the clock; the re-armed duration is the only
use of the clock (workflows/alarm.py). The kept timer is started, armed again and cancelled
only once the answers of the acts applied so far are taken (``HandLoop._answers_taken``), so
its command follows those Updates' completions however the inputs were batched. Asked at each
run's start (``HandLoop.begin_run``), at a table and at a room; a run from before it keeps a
timer per decision until its next continue-as-new."""


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

    def stop_requested(self) -> bool:
        """Whether the table was told to stop (a tournament's force-end; a room never is)."""
        ...


class HandLoop:
    """One table's hands, actions and requests (state that must survive a continue-as-new
    lives in ``state``, the carried model). Its dealer deals, its publisher shows."""

    def __init__(self, state: HandLoopState, venue: Venue, blinds: Blinds) -> None:
        """``blinds``: what the table shows before its first hand (level 0's)."""
        self.state = state
        self.venue = venue
        self.hand: Hand | None = None
        self.level, self.blinds = 0, blinds
        self.deadline_ms: int | None = None
        self.dealer = Dealer(state, venue.stop_requested)
        self.actions = Actions(self)
        self.publisher = Publisher(self, self.actions.answer)
        # Every other Update (sit-in; a room's join, leave and close) waits here for the loop.
        self.inbox = Inbox()
        self.updates_this_run = 0
        # Decided at the run's start (``begin_run``), for the whole run. ``stopped``: the
        # table read a stop (``STOP_PATCH``) and gave up the hand, the deal or the pause.
        self.stop_at_waits = False
        self.stopped = False
        self.fold_second_timeout = False
        self.stream_grace = False
        self.deliver = True  # a room always waited for its handlers (``DELIVER_PATCH``)
        self.keep_timer = False
        self.grace_budget = False
        self.timer: Alarm | None = None
        """The hand's kept decision timer (``KEPT_TIMER_PATCH``), while it runs."""
        self.timer_for: tuple[int, int] | None = None
        """The decision (hand, turn) ``timer`` was armed for: its firing times that decision
        out, and only that one."""

    def begin_run(self, *, tournament: bool) -> None:
        """Ask the run's patches, once, at its start, in the order the runs recorded them: a
        tournament's table asks ``stop-at-waits-v1``, ``act-answers-v1`` and ``deliver-v1``
        too (a room never took the first two, and always delivered).

        A run that draws by local activity (``LOCAL_DRAW_PATCH``) also asks here every patch
        the loop would first ask right after a draw (``deck-key-v1``, ``deck-v2``) or later in
        a hand (``read-model-v1``, ``record-players-v1``), so that none of their markers is
        written after a draw. Why: a draw that outlasts its workflow task (a slow vault, a
        worker killed mid-draw) is heartbeated into later tasks, and when the next worker's
        draw resolves there and a patch is asked right after it, sdk-core replays that history
        with the patch's marker seen before the draw resolved ("Non-deprecated patch marker
        encountered for change deck-key-v1, but there is no corresponding change command",
        tests/integration/test_deck_draw.py). Asked at the start, each is memoized for the
        run and writes nothing later. Runs from before the patch ask them where they did."""
        if tournament:
            self.stop_at_waits = self.dealer.stop_at_waits = workflow.patched(STOP_PATCH)
        self.fold_second_timeout = workflow.patched(TIMEOUT_FOLD_PATCH)
        self.stream_grace = workflow.patched(GRACE_PATCH)
        if tournament:
            self.publisher.act_answers = workflow.patched(ACT_ANSWER_PATCH)
        self.dealer.local_draw = workflow.patched(LOCAL_DRAW_PATCH)
        if self.dealer.local_draw:
            for patch in (DECK_KEY_PATCH, DECK_PATCH, READ_MODEL_PATCH, RECORD_PLAYERS_PATCH):
                workflow.patched(patch)
        self.actions.legal_once = workflow.patched(LEGAL_ONCE_PATCH)
        if tournament:
            self.deliver = workflow.patched(DELIVER_PATCH)
        self.keep_timer = workflow.patched(KEPT_TIMER_PATCH)
        self.grace_budget = workflow.patched(GRACE_BUDGET_PATCH)

    # -- the venues' interface ---------------------------------------------------------------
    @property
    def commitment(self) -> str | None:
        """The running hand's deck commitment (docs/fairness.md)."""
        return self.dealer.commitment

    @property
    def finished(self) -> bool:
        return self.publisher.finished

    async def ask(self, request: object) -> Any:
        """An Update's request, left for the loop to serve where it waits (workflows/inbox.py),
        counted against the run's Update budget; its answer, or its refusal raised."""
        self.updates_this_run += 1
        return await self.inbox.ask(request)

    def queue(self, event: EventInput) -> None:
        """An event for the room's stream, published with the table's next version."""
        self.publisher.queue(event)

    def changed(self) -> None:
        """The table changed: a new version for the read store (and the UI's details)."""
        self.state.version += 1
        hand = self.hand
        actor = hand.actor_seat if hand is not None and not hand.over else None
        workflow.set_current_details(
            f"hand {self.state.hand_no}, {self.venue.details()}"
            f" ({self.blinds.sb}/{self.blinds.bb}), "
            + (f"seat {actor} to act" if actor is not None else "between hands")
        )

    def finish(self) -> None:
        """The table is done for good: its last version shows it finished."""
        self.publisher.finished = True
        self.changed()

    async def flush(self) -> None:
        """Publish what changed (``Publisher.flush``). Only the loop's main line calls it."""
        await self.publisher.flush()

    async def wait_or_serve(self, ready: Callable[[], bool]) -> bool:
        """Wait until ``ready()`` or a request; serve every request found; ``ready()``."""
        return await wait_or_serve(ready, self.inbox, self.serve)

    # -- one hand ------------------------------------------------------------------------
    async def play_hand(self) -> int | None:
        """Deal and play one hand; return its number if a stop aborted it (stacks restored)."""
        state = self.state
        hand_no = state.hand_no + 1
        draw = await self.dealer.draw(f"{state.table_id}:{hand_no}")
        if draw is None:
            self.stopped = True
            return None  # stopped while the deck was drawn: no hand
        live = self.venue.dealt_seats()
        if len(live) < 2:
            return None  # a room player left while the seed was drawn: no hand after all
        positions = self._positions(live)
        # The deal time is the draw's recorded time, so a replay reads the same blinds.
        self.level, self.blinds = self.venue.blinds_at(draw.drawn_at_ms)
        cards = await self.dealer.deal(hand_no, draw, live)
        if cards is None:
            self.stopped = True
            return None  # stopped while the next hand's deck was drawn
        hand = start_hand(
            seat_count=state.seat_count,
            positions=positions,
            stacks={s.seat: s.stack for s in state.seats if s.seat in live},
            small_blind=self.blinds.sb,
            big_blind=self.blinds.bb,
            ante=self.blinds.ante,
            ante_mode=AnteMode.EVERY_PLAYER if self.blinds.ante else AnteMode.NONE,
            deck=cards,
        )
        self.hand = hand
        self.actions.acted = {}
        state.hand_no = hand_no
        state.positions = positions.to_dict()
        self.changed()
        await self.venue.hand_started(hand)

        # Histories from before the read model read a stop at the top of every turn.
        legacy_stop = not workflow.patched(READ_MODEL_PATCH)
        try:
            voided = await self._play_turns(hand, hand_no, legacy_stop)
        except BaseException:
            self._drop_timer()
            raise
        # The hand is over (or void): its kept timer goes with it, after the answers of the
        # acts applied so far are out (``_answers_taken``: a stop that came in the task after
        # an act must cancel the timer after that act's completion, as the act's own task
        # wrote it, when a replay hands it both at once).
        if self.timer is not None:
            await self._answers_taken()
            self._drop_timer()
        if voided is not None:
            return voided
        self.answer_stale_intents()
        await self._finish_hand(hand)
        return None

    async def _play_turns(self, hand: Hand, hand_no: int, legacy_stop: bool) -> int | None:
        """The hand's decisions to its end (``play_hand``)."""
        while not hand.over:
            if legacy_stop and self.venue.stop_requested():
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
                and self.venue.stop_requested()
                and not hand.over
            ):
                return self._void_hand(hand_no)
        return None

    def _void_hand(self, hand_no: int) -> int:
        """A stop abandons the running hand: stacks stay as they were before it."""
        self.hand = None
        self.dealer.void()
        self.answer_stale_intents()
        self.changed()
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
        decision = (self.state.hand_no, turn)
        if not self.keep_timer:
            alarm = await Alarm.start(
                timedelta(seconds=self.venue.decision_seconds()),
                f"decision timeout seat {table_seat.seat}",
            )
        elif self.timer is None:
            await self._answers_taken()
            alarm = self.timer = await Alarm.start(
                timedelta(seconds=self.venue.decision_seconds()), "decision timeout"
            )
            self.timer_for = decision
        else:
            alarm = self.timer  # armed for an earlier decision of this hand: it fires first
        graced = False
        try:
            while True:
                self.actions.apply_next(hand)
                if hand.turn != turn or table_seat.leaving:
                    return False
                if self.venue.stop_requested() and not self.stop_at_waits:
                    return False
                if alarm.fired and self.keep_timer and self.timer_for != decision:
                    # The kept timer ran out for a decision taken meanwhile: this one's
                    # deadline is later, so it runs on for the time this one has left (a
                    # duration, which Temporal does not check on replay; what it times out is
                    # decided by the (hand, turn) it was armed for, never by the clock).
                    await self._answers_taken()
                    alarm = self.timer = await Alarm.start(
                        timedelta(milliseconds=(self.deadline_ms or 0) - self.now_ms()),
                        "decision timeout",
                    )
                    self.timer_for = decision
                    continue
                if alarm.fired:
                    # Whole milliseconds (a room's grace for lapsed polling is whole seconds,
                    # so its timer is the one it always was).
                    extra_ms = 0
                    rationed = self.grace_budget and not grace_allowed(
                        table_seat.graced_hand, self.state.hand_no
                    )
                    if not graced and not rationed:
                        extra_ms = int(await self.venue.grace(table_seat) * 1000)
                    if extra_ms > 0:
                        graced = True
                        if self.grace_budget:
                            table_seat.graced_hand = self.state.hand_no
                        alarm = await Alarm.start(
                            timedelta(milliseconds=extra_ms),
                            f"disconnect grace seat {table_seat.seat}",
                        )
                        self.deadline_ms = self.now_ms() + extra_ms
                        if self.stream_grace:  # shown in the seat (``graceUntil``)
                            table_seat.grace_until = self.deadline_ms
                        self.changed()  # the new deadline reaches the read store
                        await self.flush()
                        continue
                    self._on_timeout(hand, table_seat.seat)
                    return False
                if self.venue.stop_requested():
                    return True
                await wait_or_serve(
                    lambda alarm=alarm: (  # type: ignore[misc]
                        self.actions.new
                        or alarm.fired
                        or self.venue.stop_requested()
                        or table_seat.leaving
                    ),
                    self.inbox,
                    self.serve,
                )
        finally:
            if not self.keep_timer:
                alarm.cancel()
            elif alarm is not self.timer or alarm.fired:
                # A grace alarm (the kept timer fired for this decision and is spent), or the
                # kept timer timed this decision out: the next decision starts a fresh one.
                alarm.cancel()
                self._drop_timer()
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
            timedelta(milliseconds=self.state.hand_pause_ms), "pause between hands"
        )
        await self.flush()  # the finished hand (each served request publishes its own)
        # ``LOCAL_DRAW_PATCH`` with ``stop_at_waits``: the next draw is no wait, so the pause
        # is where a hand boundary reads a stop, as the last input: only while its timer has
        # not fired (a stop that came with the firing or after it is read at the next
        # hand's first decision, docs/durability.md rule 9). Without this a table whose
        # seats all sit out (no decision) would read a stop only at its continue-as-new.
        stops = self.dealer.local_draw and self.stop_at_waits
        while not await wait_or_serve(
            lambda: alarm.fired or (stops and self.venue.stop_requested()), self.inbox, self.serve
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
            self.state.auto_folds += 1
            # Replay-safe: the SDK's workflow meter records nothing while replaying. The
            # worker exports it with its runtime metrics (SNG_WORKER_METRICS_ADDRESS).
            workflow.metric_meter().create_counter(
                "sng_auto_folds", "Folds the table made for a player whose timer ran out"
            ).add(1)
        self.changed()

    async def _finish_hand(self, hand: Hand) -> None:
        dealt_only = workflow.patched(RECORD_PLAYERS_PATCH)
        record = hand_record(hand)
        record.update(
            {
                "table_id": self.state.table_id,
                "hand_no": self.state.hand_no,
                "level": self.level,
                "small_blind": self.blinds.sb,
                "big_blind": self.blinds.bb,
                "ante": self.blinds.ante,
                # Who was dealt in: a room's player who sat down during the hand is not (nor,
                # from the patch on, a busted tournament seat).
                "players": {
                    str(s.seat): s.player_id
                    for s in self.state.seats
                    if s.seat in hand.seats or not dealt_only
                },
                "deck_commitment": self.dealer.commitment,
            }
        )
        self.dealer.reveal(hand, record)
        stacks_after = {int(seat): chips for seat, chips in record["stacks_after"].items()}
        for table_seat in self.state.seats:
            if table_seat.seat in stacks_after:
                table_seat.stack = stacks_after[table_seat.seat]
        self.state.last_hand = {
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
        self.changed()
        await self.venue.hand_finished(hand, record)

    # -- the players' Updates (the workflows' handlers call these) ----------------------------
    async def act(self, inp: ActInput) -> TableActResult:
        """Record the action (``Actions.record``), counted as an Update; the loop applies it."""
        self.updates_this_run += 1
        return await self.actions.record(inp)

    def answer_stale_intents(self) -> None:
        """Between hands nothing recorded can still be legal: refuse what is left (and answer
        the act that ended the hand, ``ACT_ANSWER_PATCH``)."""
        self.actions.refuse_stale()

    def _positions(self, live: list[int]) -> ButtonPositions:
        if self.state.positions is None:
            # The first button is drawn; replay-safe, and nothing to do with the deck.
            return first_positions(live, self.state.seat_count, workflow.random().choice(live))
        previous = ButtonPositions.from_dict(self.state.positions)
        return next_positions(previous, live, self.state.seat_count)

    async def sit_in(self, inp: SitInInput) -> ActResult:
        result: ActResult = await self.ask(inp)
        return result

    def _take_sit_in(self, inp: SitInInput) -> ActResult:
        table_seat = self.seat(self.checked_seat_of(inp.player_id))
        table_seat.sitting_out = False
        table_seat.timeouts = 0
        table_seat.sat_out_hands = 0
        self.changed()
        return ActResult(
            version=self.state.version,
            hand_number=self.state.hand_no,
            turn=self.hand.turn if self.hand else 0,
        )

    def verify_sit_in(self, inp: SitInInput) -> None:
        table_seat = self.seat(self.checked_seat_of(inp.player_id))
        if not (table_seat.sitting_out or table_seat.timeouts or table_seat.sat_out_hands):
            # A no-op: refused before history, so sit-ins cannot spend the run's Update
            # budget and starve the other players' actions (security review H3).
            raise refusal(DomainError(ErrorCode.INVALID_STATE, "you are not sitting out"))

    def verify_seed(self, inp: SeedInput) -> int:
        return self.dealer.verify_seed(inp)

    def take_seed(self, inp: SeedInput) -> SeedResult:
        """A player's seed for the next hand's deck (the dealer's), counted as an Update."""
        result = self.dealer.take_seed(inp)
        self.updates_this_run += 1
        return result

    def view(self, viewer: str | None) -> TableView:
        return self.publisher.view(viewer)

    # -- seats ---------------------------------------------------------------------------
    def live_seats(self) -> list[int]:
        return [s.seat for s in self.state.seats if s.stack > 0]

    def seat(self, seat: int) -> TableSeat:
        return next(s for s in self.state.seats if s.seat == seat)

    def seat_of(self, player_id: str) -> int:
        for s in self.state.seats:
            if s.player_id == player_id:
                return s.seat
        raise DomainError(ErrorCode.UNKNOWN_SEAT, "you have no seat at this table")

    def checked_seat_of(self, player_id: str) -> int:
        try:
            return self.seat_of(player_id)
        except DomainError as err:
            raise refusal(err) from None

    async def _answers_taken(self) -> None:
        """Wait until every act answered so far has been taken by its handler, so that its
        Update's completion is written before the kept timer is started, armed again or
        cancelled (``KEPT_TIMER_PATCH``).

        Why: the kept timer is started (or armed again) either at a decision's wait, once it
        fired for a decision taken meanwhile, or at the next decision, if the act that took
        it came in the same task as the firing. In the first case the act that began this
        decision completed its Update in an earlier task, or earlier in this one (the
        handler runs while the loop waits); in the second the loop goes on to the next
        decision before the handler has run, and without this wait its timer would be
        started before the completion: a task whose inputs came in two steps when it was
        recorded would not replay (``test_decision_timer.py``, the merged firing). The same
        for the cancel at a hand's end or void: a stop in the task after an act voids the
        hand before that act's handler ran (``test_interleavings.py``, the stop after an
        action). Waiting issues no command."""
        await workflow.wait_condition(lambda: not self.actions.answers)

    def _drop_timer(self) -> None:
        """Cancel the hand's kept decision timer (no command if it fired)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = self.timer_for = None

    def now_ms(self) -> int:
        return int(workflow.now().timestamp() * 1000)


class PlayerHandlers:
    """The Updates and the query a player's seat has at either table workflow."""

    loop: HandLoop

    @property
    def seen_updates(self) -> dict[str, int]:
        """The Update ids taken lately, carried across continue-as-new (core/handler_binding)."""
        return self.loop.state.seen_updates

    @workflow.update
    async def act(self, inp: ActInput) -> TableActResult:
        """Record the action; the hand loop applies it and answers."""
        return await self.loop.act(inp)

    @act.validator
    def _validate_act(self, inp: ActInput) -> None:
        self.loop.actions.verify_new(inp)

    @workflow.update
    async def sit_in(self, inp: SitInInput) -> ActResult:
        return await self.loop.sit_in(inp)

    @workflow.update
    def seed(self, inp: SeedInput) -> SeedResult:
        """A player's entropy for the next hand's deal (docs/fairness.md)."""
        return self.loop.take_seed(inp)

    @seed.validator
    def _validate_seed(self, inp: SeedInput) -> None:
        self.loop.verify_seed(inp)

    @sit_in.validator
    def _validate_sit_in(self, inp: SitInInput) -> None:
        self.loop.verify_sit_in(inp)

    @workflow.query
    def view(self, viewer: str | None = None) -> TableView:
        """For operators and debugging: players read the published state (docs/read-model.md),
        composed the same way (``seat_view``)."""
        return self.loop.view(viewer)
