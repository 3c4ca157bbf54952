"""What a table shows, and when it goes to the read store (docs/read-model.md).

The publisher builds the table's snapshot (the spectators' view, the actor's legal actions,
each seat's private part) from the hand loop's state, queues a room's stream events, and
publishes both (``flush``): by local activity, or, for a decision an ``act`` Update caused
(``act-answers-v1``), in the Update's answer, which the API and the worker write. Only the hand
loop's main line calls ``flush``, before it waits, so what it publishes depends on the loop
alone (docs/durability.md, rule 8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.blinds import Blinds
    from domain.holdem import Hand, actor_legal, private_parts, public_view
    from wire.messages import EventInput
    from wire.table_messages import (
        HandLoopState,
        NextDeck,
        TableActResult,
        TablePublication,
        TableSnapshot,
        TableView,
        seat_view,
    )
    from workflows import effects

READ_MODEL_PATCH = "read-model-v1"
"""Tables publish their state to the read store (docs/read-model.md) from this patch on."""

ACT_ANSWER_PATCH = "act-answers-v1"
"""A decision an ``act`` Update caused, while its hand runs, is not published by local
activity: the Update's answer carries the table's new public snapshot (``TableActResult.state``,
no private part and no views), and the API that made the Update and the worker that ran it
write it to the read store (docs/read-model.md, "Act answers"). sdk-core holds a workflow
task's completion, and so the Update's answer, while a local activity is outstanding; without
one the answer leaves when the task completes. Deals, timeouts, grace, pauses, finishes and
served requests still publish durably. Decided once at each run's start
(``Publisher.act_answers``, ``HandLoop.begin_run``); a tournament's table only, for now."""


class Shown(Protocol):
    """What the publisher reads from the hand loop."""

    state: HandLoopState
    hand: Hand | None
    level: int
    blinds: Blinds
    deadline_ms: int | None

    @property
    def commitment(self) -> str | None: ...


class Publisher:
    """One table's snapshot, its queued stream events, and what the read store last got."""

    def __init__(self, loop: Shown, answer: Callable[[int, TableActResult], None]) -> None:
        """``answer``: gives an act its answer (the loop's, by intent number)."""
        self.loop = loop
        self.answer = answer
        self.finished = False
        # Events for the next publication (a room's stream), in the order they were queued.
        self.events: list[EventInput] = []
        # The table version the read store last got from this run (docs/read-model.md); a
        # new run publishes its first version again, which the store takes as a no-op.
        self.published_version = -1
        # ``ACT_ANSWER_PATCH``: set at the run's start. ``pending_act`` is the act applied in
        # this decision whose answer waits for the next decision's snapshot (its deadline
        # included).
        self.act_answers = False
        self.pending_act: tuple[int, TableActResult] | None = None

    def queue(self, event: EventInput) -> None:
        """An event for the room's stream: it goes out with the table's next publication."""
        self.events.append(event)

    def snapshot(self, *, private: bool = True) -> TableSnapshot:
        """The table now as the read store keeps it: the spectators' view, the actor's legal
        actions, and (``private``) each seat's private part while a hand runs."""
        hand = self.loop.hand
        parts: dict[str, list[str]] = {}
        if hand is not None and private:
            players = {s.seat: s.player_id for s in self.loop.state.seats}
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
        loop, state = self.loop, self.loop.state
        return TableView(
            table_id=state.table_id,
            tournament_id=state.tournament_id,
            hand_no=state.hand_no,
            level=loop.level,
            small_blind=loop.blinds.sb,
            big_blind=loop.blinds.bb,
            ante=loop.blinds.ante,
            seats=[s.model_copy() for s in state.seats],
            hand=public_view(loop.hand, None) if loop.hand is not None else None,
            deck_commitment=loop.commitment,
            last_hand=state.last_hand,
            next_deck=(
                NextDeck(
                    hand_number=state.next_deck.hand_number,
                    commitment=state.next_deck.root,
                    seeded=sorted(state.next_deck.seeds),
                )
                if state.next_deck is not None
                else None
            ),
            chain_head=state.chain_head,
            finished=self.finished,
            version=state.version,
            room=state.room_shown(),
            deadline_ms=loop.deadline_ms,
        )

    async def flush(self) -> None:
        """Publish what is new: the queued events and the table's newest version (the
        pushed read model), in one local activity, or in the answer of the act that made it
        (``ACT_ANSWER_PATCH``)."""
        batch, self.events = self.events, []
        version = self.loop.state.version
        changed = version != self.published_version
        if not batch and not changed:
            return
        # Histories from before the read model published events only (and nothing at a
        # tournament table): they replay that way.
        if not workflow.patched(READ_MODEL_PATCH):
            if batch:
                await effects.publish_room_events(batch)
            return
        hand = self.loop.hand
        if self.pending_act is not None and not batch and hand is not None and not hand.over:
            # ``ACT_ANSWER_PATCH``: the act's answer carries this version; its writers
            # publish it. Nothing here awaits, so the Update answers when the task ends.
            self.answer_pending_act()
            self.published_version = version
            return
        self.answer_pending_act()  # anything else changed too: published durably as well
        self.published_version = version
        await effects.publish_table(
            TablePublication(events=batch, state=self.snapshot() if changed else None)
        )

    def hold_act(self, number: int, result: TableActResult) -> None:
        """``ACT_ANSWER_PATCH``: answer the act just applied with the snapshot the next
        decision starts from (``flush``), or, if the hand ends first, the one it ends with."""
        self.pending_act = (number, result)

    def answer_pending_act(self) -> None:
        """Give the act applied last its answer: the table as it is now, public part only."""
        if self.pending_act is None:
            return
        number, result = self.pending_act
        self.pending_act = None
        result.state = self.snapshot(private=False)
        result.version = self.loop.state.version
        self.answer(number, result)
