"""The tournament's books, which every part of TournamentWorkflow holds (registration, play,
settlement): the state carried across continue-as-new, the settings, the version and current
details, the view, the read-model rows and the tournament.lifecycle span's transitions and
record.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from domain import registration
    from domain.clock import level_deadline_ms, level_started_at_ms
    from domain.payouts import resolved_prize_structure
    from domain.settings import TournamentSettings
    from wire.messages import (
        CreateTournamentInput,
        EntrantDelta,
        EntrantRow,
        EntrantStatus,
        EntrantView,
        LifecycleConfig,
        LifecycleRecord,
        LifecycleTransition,
        Placing,
        TournamentDelta,
        TournamentRow,
        TournamentState,
        TournamentView,
        Transition,
    )
    from wire.mtt import MttPublished
    from workflows import effects
    from workflows import search_attributes as sa

DELTAS_PATCH = "read-model-deltas-v1"
"""From this patch on (asked at each run's start), the run publishes its view in parts: a
head and the entrants that changed (docs/read-model.md, "The tournament's view in parts").
Not for determinism (activity inputs are not compared on replay) but for the store: a run
that was publishing whole views when the new worker took over replays as if it had
published parts, while the store holds its whole view and no entrant rows; its first
publication of parts would leave out every entrant that did not change. So such a run
publishes whole views until its continue-as-new, whose next run writes every entrant once
(``TournamentState.dirty`` is None)."""

ROWS_PER_PAYLOAD = 1_000
"""Entrant rows per activity input (a few hundred bytes each): a publication that changes
more (the seal, the first one after an upgrade) sends its rows in parts of this many first,
so no payload nears Temporal's 2 MB limit whatever the field."""

Part = tuple[int, EntrantView | None, int | None, int, tuple[Placing, ...]]
"""One player's part of the view (``EntrantDelta``'s fields but the id) as the books compare
it: ordinal, entry, stack, stack's ordinal, finishes."""


def as_delta(player: str, part: Part) -> EntrantDelta:
    """One player's part as the read model's row (``EntrantDelta``)."""
    ordinal, entrant, stack, stack_ordinal, finishes = part
    return EntrantDelta(
        player_id=player,
        ordinal=ordinal,
        entrant=entrant,
        stack=stack,
        stack_ordinal=stack_ordinal,
        finishes=list(finishes),
    )


def same_part(a: Part, b: Part) -> bool:
    """``a == b``, with the entries compared by their fields' values (``__dict__``) rather
    than by the model's ``__eq__``: the same answer for an entry (no private or extra
    attributes), at a fraction of the cost, for every player at every publication (9 of the
    16 ms of a diff at 10,000 entrants went to the models' comparison)."""
    ea, eb = a[1], b[1]
    if ea is None or eb is None:
        same_entry = ea is eb
    else:
        same_entry = type(ea) is type(eb) and ea.__dict__ == eb.__dict__
    return a[0] == b[0] and a[2] == b[2] and a[3] == b[3] and same_entry and a[4] == b[4]


LIFECYCLE_PATCH = "lifecycle-live-v1"
"""From this patch on (asked once, at the seal), each transition from ``starting`` on is
emitted as it happens, a state_transition span under the tournament's lifecycle root
(activities/telemetry.py); tournaments sealed before it emit the root at close only."""


class Books:
    """One run's books: ``s`` is the state a continue-as-new carries, the rest is the run's."""

    def __init__(
        self, inp: CreateTournamentInput, settings: TournamentSettings, state: TournamentState
    ) -> None:
        self.inp = inp
        self.settings = settings
        self.raw_settings = inp.settings
        self.s = state
        # Entrant rows reference the tournament row: handlers wait until it exists.
        self.row_saved = inp.carry is not None
        # Updates accepted by this run, and whether it is handing over to a fresh one.
        self.updates_this_run = 0
        self.draining = False
        # Late registration's loop runs beside play (an MTT's, until its close and its last
        # fee): play does not continue-as-new under it.
        self.late_running = False
        # Play's loop waits for its next input (``Play.at_rest``: late registration's
        # hand-over continues-as-new only then).
        self.play_waiting = False
        # Whether this run publishes its view in parts (``DELTAS_PATCH``, set by the run's
        # first step), and what its last publication left in the store, per player: the
        # parts handed over as unchanged count as published.
        self.deltas = False
        self.money_ids = False
        self.entry_wallets_on = True
        """Prizes go to each finishing entry's own wallet (an MTT asks
        ``settlement.ENTRY_WALLETS_PATCH``; a Sit-and-Go always does)."""
        """Money activities carry their move's own id (``effects.MONEY_IDS_PATCH``)."""
        self.published: dict[str, Part] = {}
        # The players each publication under way carries (by its number), until it lands:
        # a publication made meanwhile carries them again (``publishing``).
        self.in_flight: dict[int, set[str]] = {}
        self.publications = 0
        if state.dirty is not None:
            dirty = set(state.dirty)
            self.published = {
                p: (ordinal, entrant.model_copy() if entrant else None, stack, order, finishes)
                for p, (ordinal, entrant, stack, order, finishes) in self._parts().items()
                if p not in dirty
            }

    def standings(self) -> list[Placing]:
        return sorted(self.s.finishes, key=lambda f: f.place)

    def taken(self) -> int:
        return registration.taken(self.s.entrants)

    def count(self, status: EntrantStatus) -> int:
        return sum(1 for e in self.s.entrants.values() if e.status is status)

    def now_ms(self) -> int:
        return int(workflow.now().timestamp() * 1000)

    def bump(self) -> None:
        self.s.version += 1
        # What the Temporal UI shows as this workflow's current details.
        alive = sum(1 for chips in self.s.stacks.values() if chips > 0)
        workflow.set_current_details(
            f"{self.s.phase.value}: {self.taken()}/{self.settings.seats} entrants, level "
            f"{self.s.level}, {self.s.hands_played} hands, {alive or '-'} players left"
        )

    def view(self, *, head: bool = False) -> TournamentView:
        """The whole view; ``head``: without entrants, stacks and standings (their parts are
        published as rows, ``entrant_parts``)."""
        return TournamentView(
            tournament_id=self.s.tournament_id,
            name=self.s.name,
            state=self.s.phase,
            kind=str(self.settings.kind),
            seats=self.settings.seats,
            entry_fee=self.settings.entry_fee,
            starting_stack=self.settings.starting_stack,
            registered_count=self.taken(),
            paid_count=self.count(EntrantStatus.PAID),
            money_backend=self.inp.money_backend,
            field_size=self.s.field_size,
            starts_at_ms=self.s.starts_at_ms,
            play_start_ms=self.s.play_start_ms,
            current_level=self.s.level,
            level_ends_at_ms=(
                level_deadline_ms(self.settings, self.s.play_start_ms, self.s.level)
                if self.s.play_start_ms is not None
                else None
            ),
            table_workflow_id=self.s.table_workflow_id,
            hands_played=self.s.hands_played,
            stacks={} if head else dict(self.s.stacks),
            standings=[] if head else self.standings(),
            payouts=list(self.s.payouts),
            payout_retry_at_ms=self.s.payout_retry_at_ms,
            entry_fees_total=self.settings.entry_fee * (self.s.field_size or 0),
            rake_total=self.s.rake_total,
            rake_failure=self.s.rake_failure,
            settings=self.raw_settings,
            force_end_min_level_age_seconds=self.inp.force_end_min_level_age_seconds,
            entrants=(
                []
                if head
                else [e for e in self.s.entrants.values() if e.status is not EntrantStatus.RELEASED]
            ),
            version=self.s.version,
            mtt=self.mtt_published(),
        )

    def entrant_parts(self) -> dict[str, EntrantDelta]:
        """Each player's part of the view as it stands (``wire.tournament_delta.compose``
        puts a head and these back together into ``view()``): every entrant (a released one
        too: it may hold a finish, and may come back), and anyone else with a stack or a
        finish."""
        return {player: as_delta(player, part) for player, part in self._parts().items()}

    def _parts(self) -> dict[str, Part]:
        """``entrant_parts`` as plain tuples, cheap to build and compare for every player at
        each publication: at 10,000 entrants about 7 ms to build and 11 ms to build and
        compare with ``same_part`` (models for each took a second; the models' own ``__eq__``
        made it 16 ms), less than the whole view's encoding alone took (docs/read-model.md,
        docs/capacity.md)."""
        finishes: dict[str, list[Placing]] = {}
        for f in self.s.finishes:
            finishes.setdefault(f.player_id, []).append(f)
        stack_order = {p: i for i, p in enumerate(self.s.stacks)}
        parts: dict[str, Part] = {}
        for ordinal, (player, entrant) in enumerate(self.s.entrants.items()):
            parts[player] = (
                ordinal,
                entrant,
                self.s.stacks.get(player),
                stack_order.get(player, -1),
                tuple(finishes.get(player, ())),
            )
        for player in [*self.s.stacks, *finishes]:
            if player not in parts:
                parts[player] = (
                    -1,
                    None,
                    self.s.stacks.get(player),
                    stack_order.get(player, -1),
                    tuple(finishes.get(player, ())),
                )
        return parts

    def unpublished(self) -> dict[str, Part]:
        """The players whose part differs from what the last publication left."""
        published = self.published
        return {
            player: part
            for player, part in self._parts().items()
            if (old := published.get(player)) is None or not same_part(old, part)
        }

    def changed_parts(self) -> list[EntrantDelta]:
        """The players whose part differs from what the last publication left (and noted as
        published now: every publication lands, its activity is retried until it does). The
        books change entrants in place, so what is noted holds a copy of each entry."""
        changed = []
        for player, part in self.unpublished().items():
            ordinal, entrant, stack, stack_ordinal, finishes = part
            copy = entrant.model_copy() if entrant is not None else None
            self.published[player] = (ordinal, copy, stack, stack_ordinal, finishes)
            changed.append(self.part_delta(player))
        return changed

    def part_delta(self, player: str) -> EntrantDelta:
        """``player``'s part as the last publication noted it."""
        return as_delta(player, self.published[player])

    @contextlib.asynccontextmanager
    async def publishing(
        self,
    ) -> AsyncIterator[tuple[TournamentView | None, TournamentDelta | None]]:
        """What a read-model write carries (``TournamentRow``/``HandRow``), for the write
        made in the ``with`` block: the whole view in a run from before ``DELTAS_PATCH``,
        else the head and the changed entrants. Rows past one payload's worth go first, each
        part in its own activity, and the last part goes with the head, so readers see the
        new head only with all its rows.

        Read-your-writes (docs/read-model.md): a change is noted as published by the first
        publication that carries it, but play's and registration's loops publish side by
        side, and an Update answers once its own write has landed. So the parts another
        publication carries that has not landed yet are carried again in the last part
        (the same data: the store keeps the newer version of a row). Were there more than
        a payload of them, this one waits for those to land instead (no command: replay is
        unchanged either way)."""
        if not self.deltas:
            yield self.view(), None
            return
        rows = min(ROWS_PER_PAYLOAD, self.inp.rows_per_payload)
        if len(self.carried_elsewhere()) > rows:
            await workflow.wait_condition(lambda: not self.in_flight)
        again = self.carried_elsewhere()
        # Head and rows from the same instant: the parts' activities below let other
        # handlers run.
        head = self.view(head=True)
        changed = self.changed_parts()
        number = self.publications = self.publications + 1
        self.in_flight[number] = {p.player_id for p in changed}
        try:
            while len(changed) > rows:
                part, changed = changed[:rows], changed[rows:]
                await effects.publish_entrants(
                    TournamentDelta(
                        tournament_id=head.tournament_id, version=head.version, entrants=part
                    )
                )
            mine = {p.player_id for p in changed}
            changed += [self.part_delta(p) for p in sorted(again - mine)]
            yield (
                None,
                TournamentDelta(
                    tournament_id=head.tournament_id,
                    version=head.version,
                    head=head,
                    entrants=changed,
                ),
            )
        finally:
            del self.in_flight[number]

    def carried_elsewhere(self) -> set[str]:
        """The players the publications under way carry."""
        return set().union(*self.in_flight.values())

    def carried(self) -> CreateTournamentInput:
        """The next run's input for continue-as-new: the state, with the players whose part
        this run has not published yet (all of them, None, from a run that publishes whole
        views)."""
        # A publication still under way (none is, at the run's rests) may never land.
        dirty = {*self.unpublished(), *self.carried_elsewhere()}
        self.s.dirty = [p for p in self._parts() if p in dirty] if self.deltas else None
        return self.inp.model_copy(update={"carry": self.s})

    def mtt_published(self) -> MttPublished | None:
        """What an MTT's view says of its tables (the agents' ``GameState.mtt``), from the
        books as they stand; None for a Sit-and-Go and before an MTT's tables open. A value
        computed for the published view only: no command depends on it."""
        m = self.s.mtt
        if m is None:
            return None
        late = self.s.late
        return MttPublished(
            tables={t.workflow_id: t.number for t in m.tables.values() if not t.done},
            hand_for_hand=m.hand_for_hand,
            final_table=m.final_table,
            late_registration_closes_at_ms=late.closes_at_ms if late is not None else None,
            late_registration_open=late is not None and late.open,
            in_transit={i.player_id: i.to_table for i in m.in_transit},
            in_round=sorted(
                t.number
                for t in m.tables.values()
                if m.hand_for_hand and not t.done and not t.at_boundary
            ),
        )

    def record_transition(self) -> bool:
        """Note the phase's start if it is a new phase; say whether it was."""
        if not self.s.transitions or self.s.transitions[-1].state != self.s.phase.value:
            self.s.transitions.append(Transition(state=self.s.phase.value, at_ms=self.now_ms()))
            return True
        return False

    def lifecycle_config(self) -> LifecycleConfig:
        field_size = self.s.field_size or self.settings.seats
        summary = "/".join(
            f"{p.percent:g}" for p in resolved_prize_structure(self.settings, field_size)
        )
        return LifecycleConfig(
            tournament_id=self.s.tournament_id,
            seats=self.settings.seats,
            entry_fee=self.settings.entry_fee,
            starting_stack=self.settings.starting_stack,
            level_duration_seconds=self.settings.level_duration_ms // 1000,
            action_timeout_seconds=self.settings.action_timeout_seconds,
            prize_structure_summary=summary,
        )

    async def emit_transition(self) -> None:
        """The transition just recorded, emitted now (``LIFECYCLE_PATCH``); best effort."""
        *before, entered = self.s.transitions
        try:
            await effects.record_transition(
                LifecycleTransition(
                    **self.lifecycle_config().model_dump(),
                    index=len(before),
                    from_state=before[-1].state if before else "",
                    to_state=entered.state,
                    at_ms=entered.at_ms,
                )
            )
        except ActivityError:
            workflow.logger.warning("state_transition to %s not emitted", entered.state)

    async def record_lifecycle(self) -> None:
        try:
            await effects.record_lifecycle(
                LifecycleRecord(
                    **self.lifecycle_config().model_dump(),
                    transitions=list(self.s.transitions),
                    closed_at_ms=self.now_ms(),
                    actual_payouts=[p.amount for p in self.s.payouts],
                    auto_fold_count=self.s.auto_folds,
                )
            )
        except ActivityError:
            workflow.logger.warning("tournament.lifecycle span not recorded")

    async def save_tournament(self) -> None:
        entered = self.record_transition()
        workflow.upsert_search_attributes(
            [
                sa.TOURNAMENT_STATE.value_set(self.s.phase.value),
                sa.TABLE_KIND.value_set(str(self.settings.kind)),
                sa.SEATS.value_set(self.settings.seats),
                sa.ENTRY_FEE.value_set(self.settings.entry_fee),
                sa.CURRENT_LEVEL.value_set(self.s.level),
            ]
        )
        async with self.publishing() as (view, delta):
            await effects.save_tournament(
                TournamentRow(
                    tournament_id=self.s.tournament_id,
                    name=self.s.name,
                    kind=str(self.settings.kind),
                    seats=self.settings.seats,
                    entry_fee=self.settings.entry_fee,
                    rake_fee=self.settings.rake_fee,
                    starting_stack=self.settings.starting_stack,
                    settings=self.raw_settings,
                    state=self.s.phase,
                    workflow_id=workflow.info().workflow_id,
                    registered_count=self.taken(),
                    current_level=self.s.level,
                    field_size=self.s.field_size,
                    play_started_at_ms=self.s.play_start_ms,
                    level_started_at_ms=(
                        level_started_at_ms(self.settings, self.s.play_start_ms, self.s.level)
                        if self.s.play_start_ms is not None
                        else None
                    ),
                    ended_at_ms=self.s.ended_at_ms,
                    closed_at_ms=self.s.closed_at_ms,
                    view=view,
                    delta=delta,
                )
            )
        if entered and self.s.lifecycle_live:
            await self.emit_transition()

    async def save_entrant(self, entrant: EntrantView) -> None:
        await effects.save_entrant(
            EntrantRow(
                tournament_id=self.s.tournament_id,
                player_id=entrant.player_id,
                owner_user_id=entrant.owner_user_id,
                is_agent=entrant.is_agent,
                advisor_agent_id=entrant.advisor_agent_id,
                status=entrant.status,
                seat=entrant.seat,
            )
        )
