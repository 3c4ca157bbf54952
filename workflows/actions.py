"""The players' actions at a table: recorded by the ``act`` Update's handler, checked once,
applied by the hand loop (docs/durability.md, rule 3).

The handler records an act and waits; the loop (workflows/hand_loop.py) applies the first one
that answers the decision it is at (``apply_next``), keeps those for a later turn of the hand,
and refuses the rest with the code the validator would have given; between hands it refuses
whatever is left (``refuse_stale``). The validator (``verify_new``) refuses before history an
act that is not legal now, a second act for one turn, and a raise past the round's cap.
"""

from __future__ import annotations

from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import DomainError, ErrorCode
    from domain.holdem import STREETS, Hand
    from wire.table_messages import ActInput, HandLoopState, TableActResult, seat_view
    from workflows.errors import refusal
    from workflows.publisher import Publisher

RAISES_PER_ROUND = 20
"""Raises (all-ins apart) one betting round takes: a house rule that bounds a hand's acts."""

LEGAL_ONCE_PATCH = "legal-once-v1"
"""An act's legality is checked once, by its validator: the loop applies a recorded act that
answers the hand and turn the table is at without checking it again (``Actions.record``).
Decided once at each run's start (``HandLoop.begin_run``): a run recorded before it may hold
acts its validator of the time let through and the loop refused."""


class Acting(Protocol):
    """What the actions read and change of the hand loop."""

    state: HandLoopState
    hand: Hand | None
    publisher: Publisher

    def changed(self) -> None: ...


class Actions:
    """The acts recorded for the loop and the answers it gave, by intent number."""

    def __init__(self, loop: Acting) -> None:
        self.loop = loop
        # Acts waiting for the hand loop (the handler only records them), and the answers
        # the loop gave, by intent number.
        self.intents: list[tuple[int, ActInput]] = []
        self.answers: dict[int, TableActResult | ApplicationError] = {}
        self.intent_seq = 0
        self.new = False
        # The first act each seat's player sent for each turn of the running hand, as its
        # handler recorded it: only the validator reads it (a second act for that turn is
        # refused before history, security review N2), so it changes no command.
        self.acted: dict[tuple[str, int, int], ActInput] = {}
        # ``LEGAL_ONCE_PATCH``: set at the run's start (``HandLoop.begin_run``).
        self.legal_once = False

    def answer(self, number: int, answer: TableActResult) -> None:
        self.answers[number] = answer

    async def record(self, inp: ActInput) -> TableActResult:
        """Record the action; the hand loop applies it (``apply_next``) and answers.

        Legality is checked once per action on the normal path (``LEGAL_ONCE_PATCH``): the
        validator (``verify_new``) checks it against the hand and turn the table is at;
        the loop applies an act that still answers that hand and turn, for the seat to act,
        without a second check (``_verified_here``), and the engine applies it without a
        third (``Hand.act_verified``). Only an act the table moved past since (a timeout in
        the same task, a recording where the acceptance came with the timer) is checked
        again by the loop, and refused or kept for its turn as before (durability rule 3).
        Runs from before the patch check in the loop every time, as they did."""
        self.acted.setdefault((inp.player_id, inp.hand_no, inp.turn), inp)
        self.intent_seq += 1
        number = self.intent_seq
        self.intents.append((number, inp))
        self.new = True
        await workflow.wait_condition(lambda: number in self.answers)
        answer = self.answers.pop(number)
        if isinstance(answer, ApplicationError):
            raise answer
        return answer

    def _apply_act(self, hand: Hand, seat: int, inp: ActInput) -> TableActResult:
        # Verified against this state already (the validator, or the loop's ``verify``
        # just now): the engine does not check it a third time.
        hand.act_verified(seat, inp.action, inp.amount)
        table_seat = next(s for s in self.loop.state.seats if s.seat == seat)
        table_seat.timeouts = 0
        table_seat.sitting_out = False
        self.loop.changed()
        if self.loop.publisher.act_answers:
            # The snapshot comes with the answer (``Publisher.answer_pending_act``), built once.
            return TableActResult(
                version=self.loop.state.version, hand_number=self.loop.state.hand_no, turn=hand.turn
            )
        snapshot = self.loop.publisher.snapshot()
        return TableActResult(
            version=self.loop.state.version,
            hand_number=self.loop.state.hand_no,
            turn=hand.turn,
            actor_view=seat_view(snapshot, inp.player_id, snapshot.private.get(inp.player_id)),
            spectator_view=snapshot.view,
        )

    def verify(self, inp: ActInput) -> int:
        try:
            seat = self._seat_of(inp.player_id)
            hand = self.loop.hand
            if hand is None or hand.over:
                raise DomainError(ErrorCode.STALE_TURN, "no hand is waiting for an action")
            if hand.actor_seat != seat:
                raise DomainError(ErrorCode.NOT_YOUR_TURN, "it is not your turn")
            if inp.hand_no != self.loop.state.hand_no or inp.turn != hand.turn:
                raise DomainError(
                    ErrorCode.STALE_TURN,
                    f"that answers hand {inp.hand_no} turn {inp.turn}; the table is at hand"
                    f" {self.loop.state.hand_no} turn {hand.turn}",
                )
            hand.verify_action(seat, inp.action, inp.amount)
        except DomainError as err:
            raise refusal(err) from None
        return seat

    def verify_new(self, inp: ActInput) -> None:
        """The act validator's checks: ``verify``, and one action per seat and turn
        (security review N2). Only a validator calls it, and validators never replay, so it
        may read what the handlers recorded (``acted``); the loop's own re-check
        (``verify``) is unchanged.

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
        self.verify(inp)
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
        hand = self.loop.hand
        if hand is None or str(inp.action) != "raise":
            return
        street = STREETS[hand.street]
        raises = sum(
            1
            for a in hand.actions
            if a["street"] == street and a["action"] == "raise" and not a["all_in"]
        )
        seat = self._seat_of(inp.player_id)
        player = hand.seats.index(seat)
        if raises >= RAISES_PER_ROUND and inp.amount != hand.stacks[player] + hand.bets[player]:
            raise refusal(
                DomainError(
                    ErrorCode.ILLEGAL_ACTION,
                    f"this betting round had {RAISES_PER_ROUND} raises: call, fold or go"
                    " all-in (docs/rooms.md, the raise cap)",
                )
            )

    def apply_next(self, hand: Hand) -> None:
        """Apply the first recorded action that is legal now; keep those for a later turn of
        this hand; refuse the rest with the code the validator would give.

        One action per decision: the next turn gets its own timer, as it would have had if
        the two actions had come in separate tasks (Temporal checks the timers' ids).
        """
        self.new = False
        for intent in list(self.intents):
            number, inp = intent
            seat = self._verified_here(hand, inp)
            if seat is None:
                try:
                    seat = self.verify(inp)
                except ApplicationError as err:
                    if (
                        inp.hand_no == self.loop.state.hand_no
                        and inp.turn > hand.turn
                        and not hand.over
                    ):
                        continue  # the hand may yet get there (a timeout in the same task)
                    self.intents.remove(intent)
                    self.answers[number] = err
                    continue
            self.intents.remove(intent)
            result = self._apply_act(hand, seat, inp)
            if self.loop.publisher.act_answers:
                # Answered with the snapshot the next decision starts from (``flush``), or,
                # if the hand ends first, the snapshot it ends with (``refuse_stale``).
                self.loop.publisher.hold_act(number, result)
                if hand.over:
                    self.loop.publisher.answer_pending_act()
            else:
                self.answers[number] = result
            return

    def _verified_here(self, hand: Hand, inp: ActInput) -> int | None:
        """``LEGAL_ONCE_PATCH``: the seat of an act its validator verified against the state
        the hand is in now, or None (then the loop checks it, ``verify``).

        The validator accepts an act only for the hand and turn the table is at, from the
        seat to act, and checks its legality there; a hand's state at a turn is fixed by the
        actions before it (a sit-in, a grace or a publication changes no betting). So an act
        that still answers this hand and turn, for the seat to act, was verified against
        this very state. The loop decides from replayed state and the act's own data only,
        never from what the validator saw, so a replay (no validator) decides the same. An
        act that answers another turn than the table's (one a timeout overtook, or one
        recorded in a task with the timeout before it, as the worker-death anomaly writes)
        is checked, kept or refused by ``verify`` as before."""
        if not self.legal_once or hand.over:
            return None
        if inp.hand_no != self.loop.state.hand_no or inp.turn != hand.turn:
            return None
        seat = next((s.seat for s in self.loop.state.seats if s.player_id == inp.player_id), None)
        return seat if seat is not None and seat == hand.actor_seat else None

    def refuse_stale(self) -> None:
        """Between hands nothing recorded can still be legal: refuse what is left (and answer
        the act that ended the hand, ``ACT_ANSWER_PATCH``)."""
        self.loop.publisher.answer_pending_act()
        for number, inp in self.intents:
            try:
                self.verify(inp)
                raise AssertionError("an action cannot be legal between hands")
            except ApplicationError as err:
                self.answers[number] = err
        self.intents = []
        self.new = False

    def _seat_of(self, player_id: str) -> int:
        for s in self.loop.state.seats:
            if s.player_id == player_id:
                return s.seat
        raise DomainError(ErrorCode.UNKNOWN_SEAT, "you have no seat at this table")
