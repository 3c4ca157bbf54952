"""Tables: an MTT's table manager. One part of TournamentWorkflow, used only when
``maxEntrants`` is above ``seats`` (a Sit-and-Go's play is ``play.py``'s alone, command for
command as before).

At the start it draws the field across the fewest tables (``domain/mtt/seating.py``) and
starts one child ``TableWorkflow`` per table (``table-<tournament>-<n>``), all on the
tournament's one level clock (``play_start_ms``). Each table reports every hand (signed, as a
Sit-and-Go's table does) and then waits for this part's signed order for that boundary
(``wire/mtt.py``). At each table's boundary the books take the hand (chips, busts), seat the
entries in transit to it, run ``plan_boundary`` over every table, and apply the moves *from*
the tables standing at a boundary: an entry moving to a table that is dealing is held here
("in transit", its chips with it) and seated at that table's next boundary. A table is held
at its boundary while hand-for-hand or the final table's redraw waits for the others, or
while it has fewer than two players to deal to. The busts of one hand-for-hand round wait
in the books until every table has reported the round's hand, then are placed together
(``place_round``: ties across tables, ``h4h-places-v1``). docs/mtt.md, "The table manager",
has the protocol and its decisions.

The books are checked at every boundary (``check_books``): every live entry on exactly one
table or in transit, and every chip counted (``sum(stacks) + in transit == entrants ×
startingStack``). A broken invariant fails the workflow task, which retries visibly, rather
than record a wrong boundary (as play.py does for a Sit-and-Go's chip count).
"""

from __future__ import annotations

import hmac
from collections import Counter

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.holdem.positions import ButtonPositions
    from domain.mtt.balancing import Move, plan_boundary
    from domain.mtt.hand_for_hand import RoundBust, hand_for_hand, place_round
    from domain.mtt.seating import (
        Table,
        seat_field,
        seat_late_entrant,
        tables_needed,
        waits_for_button,
    )
    from domain.payouts import resolve_payout_amounts
    from domain.standings import order_busts
    from wire.events import Event, FinalTable, HandForHand, PlayerMoved, TableBroken
    from wire.ids import table_workflow_id
    from wire.messages import EntrantStatus, Placing
    from wire.mtt import (
        ArrivingSeat,
        BoundaryOrder,
        HeldBust,
        InTransit,
        LateRegistration,
        ManagedTable,
        MttBooks,
        MttTable,
        MttView,
        RoundBusted,
    )
    from wire.signals import BOUNDARY, HAND_COMPLETED, STOP, TABLE_FINISHED
    from wire.table_messages import (
        HandReport,
        StopOrder,
        TableResult,
        TableSeat,
        TableState,
        report_mac,
    )
    from workflows import effects
    from workflows.table import TableWorkflow
    from workflows.tournament.books import Books


H4H_PLACES_PATCH = "h4h-places-v1"
"""From this patch on, the busts of one hand-for-hand round are placed together when every
table of the round has reported (``place_round``: ties across tables, prizes split), and a
table that finished the round's hand waits for the others even once the bubble has burst.
Asked at each run's start, for an MTT only (``TournamentWorkflow.run``); before it, each
report's busts were placed on their own, one report after the other."""


MTT_EVENTS_PATCH = "mtt-events-v1"
"""From this patch on, an MTT publishes its table moves, broken tables, hand-for-hand's start
and end, the final table and late registration's close to its event log (docs/events.md),
each once per dedupe key. Asked at each run's start, for an MTT only; a run before it
publishes none of them (its commands stay as they were)."""


BUSTS_BY_SEAT_PATCH = "busts-by-seat-v1"
"""From this patch on, a report's busts are taken by seat (``Tables.take_hand``): a hand's
record lists them in dealing order from the button (``domain/holdem/record.py``), so two
busts with equal stacks at one table got their distinct places (and a split's odd chip)
by where the button stood, against ``place_round``'s rule (CI-47 caught it). Asked at each
run's start, for an MTT only; before it, the record's order."""


class Tables:
    """The table manager's steps over ``books.s.mtt`` (no state of its own)."""

    def __init__(self, books: Books) -> None:
        self.books = books
        self.round_places = False
        """``H4H_PLACES_PATCH``, asked at the run's start (an MTT's only)."""
        self.events_on = False
        """``MTT_EVENTS_PATCH``, asked at the run's start (an MTT's only)."""
        self.busts_by_seat = False
        """``BUSTS_BY_SEAT_PATCH``, asked at the run's start (an MTT's only)."""
        self.events: list[tuple[str, Event]] = []
        """Events of the boundary being processed, published at its end (dedupe key, body)."""

    def note(self, key: str, event: Event) -> None:
        """Publish ``event`` at the end of this boundary (under the patch only)."""
        if self.events_on:
            self.events.append((key, event))

    async def publish_events(self) -> None:
        """The boundary's events, in the order they happened; a retried publish is a no-op
        (each key is unique in the tournament's log)."""
        events, self.events = self.events, []
        for key, event in events:
            await effects.publish(self.books.s.tournament_id, key, event)

    def view(self) -> MttView | None:
        """The books and the chips, for the ``tables`` query (None for a Sit-and-Go),
        without the tables' report secrets."""
        b = self.books
        if b.s.mtt is None:
            return None
        books = b.s.mtt.model_copy(deep=True)
        for table in books.tables.values():
            table.secret = ""  # the tables' report keys are the tournament's alone
        return MttView(
            books=books,
            stacks=b.s.stacks,
            field_size=b.s.field_size or 0,
            starting_stack=b.settings.starting_stack,
        )

    @property
    def m(self) -> MttBooks:
        assert self.books.s.mtt is not None
        return self.books.s.mtt

    # -- the start -----------------------------------------------------------------------
    async def start(self) -> None:
        """Draw the field across the fewest tables and start a table workflow for each."""
        b = self.books
        s = b.settings
        paid = sorted(p for p, e in b.s.entrants.items() if e.status is EntrantStatus.PAID)
        drawn = seat_field(paid, seats=s.seats, randbelow=workflow.random().randrange)
        books = MttBooks()
        for table in drawn:
            wid = table_workflow_id(b.s.tournament_id, table.table_id)
            books.tables[table.table_id] = MttTable(
                number=table.table_id,
                workflow_id=wid,
                secret=await effects.new_report_secret(wid),
                seats=dict(table.seats),
            )
            for seat, player in table.seats.items():
                b.s.entrants[player].seat = seat
        b.s.mtt = books
        # The view's table is table 1 (the final table): a client finds the others by the
        # tables query (docs/mtt.md).
        b.s.table_workflow_id = books.tables[1].workflow_id
        b.s.table_secret = books.tables[1].secret
        b.s.reports_v2 = True  # every MTT signs its reports (no history from before)
        self.check_books()
        for t in books.tables.values():
            await workflow.start_child_workflow(
                TableWorkflow.run,
                TableState(
                    table_id=t.workflow_id,
                    tournament_id=b.s.tournament_id,
                    parent_workflow_id=workflow.info().workflow_id,
                    seat_count=s.seats,
                    settings=b.raw_settings,
                    play_start_ms=b.s.play_start_ms or 0,
                    seats=[
                        TableSeat(seat=seat, player_id=player, stack=s.starting_stack)
                        for seat, player in sorted(t.seats.items())
                    ],
                    hand_pause_ms=b.inp.hand_pause_ms,
                    report_secret=t.secret,
                    report_mac=True,
                    managed=ManagedTable(number=t.number),
                ),
                id=t.workflow_id,
                parent_close_policy=ParentClosePolicy.ABANDON,
                static_summary=f"table {t.number} of tournament {b.s.tournament_id}",
            )

    # -- the tables' reports (signal handlers: no commands) ------------------------------
    def table_of(self, table_id: str) -> MttTable | None:
        return next((t for t in self.m.tables.values() if t.workflow_id == table_id), None)

    def take_report(self, report: HandReport) -> bool:
        """A hand report counts if its table signed it and it is that table's next hand."""
        b = self.books
        table = self.table_of(report.table_id)
        if table is None or table.done:
            workflow.logger.warning("ignored a report from %s", report.table_id)
            return False
        expected = report_mac(
            table.secret, HAND_COMPLETED, table.workflow_id, report.hand_no, report
        )
        if not hmac.compare_digest(report.mac, expected):
            workflow.logger.warning("ignored an unsigned report from %s", report.table_id)
            return False
        queued = [r.hand_no for r in b.s.pending_hands if r.table_id == report.table_id]
        if report.hand_no != (max(queued) if queued else table.hands) + 1:
            workflow.logger.warning("ignored a report of hand %s out of order", report.hand_no)
            return False
        return True

    def take_finished(self, result: TableResult) -> None:
        """A table stopped (force-end) or finished after its last order: its stacks as it
        stood are the books' (a table that finished by order had none left)."""
        table = self.table_of(result.table_id)
        if table is None or table.done:
            return
        expected = report_mac(
            table.secret, TABLE_FINISHED, table.workflow_id, result.hands_played, result
        )
        if not hmac.compare_digest(result.mac, expected):
            workflow.logger.warning("ignored an unsigned table_finished from %s", result.table_id)
            return
        # Its stacks are the books' already: a stop voids the hand it aborts (the stacks go
        # back to the last boundary's), and the books took every boundary but any report
        # still queued (sent before the stop reached it: play takes it next, against this
        # table's seats, which a stopped table keeps; ``books_fault``).
        table.done = True
        if not any(r.table_id == table.workflow_id for r in self.books.s.pending_hands):
            table.in_round = False  # its round hand (if any) was voided: it busts nobody
        if all(t.done for t in self.m.tables.values()):
            self.books.s.table_done = TableResult(
                table_id=self.books.s.table_workflow_id or "",
                hands_played=sum(t.hands for t in self.m.tables.values()),
                stacks={},
                auto_folds=self.books.s.auto_folds,
            )

    # -- one table's hand boundary -------------------------------------------------------
    def take_hand(self, report: HandReport) -> tuple[list[Placing], dict[str, int]]:
        """The hand's chips and busts into the books (no commands): the places, and the
        stacks of the table's players after it."""
        b = self.books
        table = self.table_of(report.table_id)
        assert table is not None
        before = {player: b.s.stacks[player] for player in table.seats.values()}
        after = dict(before)
        for seat, chips in report.stacks_after.items():
            after[table.seats[seat]] = chips
        if sum(after.values()) != sum(before.values()):
            raise RuntimeError(
                f"chips not conserved at {table.workflow_id} hand {report.hand_no}: "
                f"{sum(before.values())} before, {sum(after.values())} after"
            )
        alive_before = sum(1 for chips in b.s.stacks.values() if chips > 0)
        rows = (
            sorted(report.busted, key=lambda x: x["seat"]) if self.busts_by_seat else report.busted
        )
        busted = [(table.seats[x["seat"]], x["stack_before"]) for x in rows]
        in_round, table.in_round = table.in_round, False
        finishes: list[Placing] = []
        late = self.late_open()
        if late is not None:
            # While late registration is open the field is not final, so no bust can have
            # its place yet: the busts wait for the close (``place_held``), in order.
            if busted:
                late.groups += 1
                late.held.extend(
                    HeldBust(player_id=p, stack_before=s, hand_no=report.hand_no, group=late.groups)
                    for p, s in busted
                )
        elif in_round:
            # A hand-for-hand round's busts wait for the round's other tables.
            self.m.round_busts.extend(
                RoundBusted(player_id=p, table=table.number, stack_before=s, hand_no=report.hand_no)
                for p, s in busted
            )
        else:
            finishes = [
                Placing(player_id=f.entrant, place=f.place, rank=f.rank, hand_number=report.hand_no)
                for f in order_busts(busted, alive_before=alive_before)
            ]
        b.s.stacks.update(after)
        if in_round and not self.round_open():
            finishes.extend(self.close_round())
        alive = [p for p, chips in b.s.stacks.items() if chips > 0]
        if len(alive) == 1:
            finishes.append(
                Placing(player_id=alive[0], place=1, rank=1, hand_number=report.hand_no)
            )
        table.hands = report.hand_no
        b.s.auto_folds += report.auto_folds - table.auto_folds
        table.auto_folds = report.auto_folds
        positions = report.record.get("positions")
        table.positions = dict(positions) if positions else None
        table.at_boundary = True
        table.away = sorted(table.seats[x] for x in report.sitting_out if x in table.seats)
        self.m.boundaries += 1
        for seat, player in sorted(table.seats.items()):
            if b.s.stacks[player] == 0:
                del table.seats[seat]
                table.stand_up.append(seat)
        for moving in [i for i in self.m.in_transit if i.to_table == table.number]:
            self.m.in_transit.remove(moving)
            self.sit(
                table,
                moving.to_seat,
                moving.player_id,
                moving.stack,
                waits=None,
                sitting_out=moving.sitting_out,
            )
        return finishes, after

    async def after_hand(self) -> None:
        """Plan the boundary over every table, apply what can be applied now, and send each
        table standing at a boundary its order unless it has to wait."""
        b = self.books
        m = self.m
        running = [t for t in m.tables.values() if not t.done]
        alive = sum(1 for chips in b.s.stacks.values() if chips > 0)
        if b.s.force_end_requested:
            # Every table is being stopped: no more moves or orders (a table that has
            # returned could not take one), each waits at its boundary for its stop.
            self.check_books()
            return
        if alive <= 1:
            self.check_books()
            for t in running:
                if t.at_boundary:
                    await self.send(t, finish=True)
            return
        paid = len(resolve_payout_amounts(b.settings, b.s.field_size or 0))
        was_hand_for_hand = m.hand_for_hand
        # An open round holds every table until its last one reports, bubble burst or not.
        # While late registration is open there is no bubble: the paid places are known
        # only at its close, from the final field (docs/mtt.md).
        m.hand_for_hand = self.late_open() is None and (
            self.round_open()
            or hand_for_hand(players_left=alive, paid_places=paid, tables_left=len(running))
        )
        if m.hand_for_hand != was_hand_for_hand:
            self.note(
                f"hand_for_hand:{m.boundaries}",
                HandForHand(on=m.hand_for_hand, players_left=alive),
            )
        final = len(running) > 1 and tables_needed(alive, b.settings.seats) == 1
        everyone_waits = all(t.at_boundary for t in running)
        hold = (m.hand_for_hand or final) and not everyone_waits
        if not hold:
            moves, waits = self.plan(running)
            self.apply(moves, waits)
        if final and everyone_waits:
            # The final table's first hand draws its button afresh (TDA Rule 12).
            first = not m.final_table
            m.final_table = True
            final_table = m.tables[min(t.number for t in running if t.seats)]
            final_table.redraw_button = True
            if first:
                self.note("final_table", FinalTable(players=sorted(final_table.seats.values())))
        self.check_books()
        for t in sorted(running, key=lambda t: t.number):
            if not t.at_boundary or t.done:
                continue
            if not t.seats:
                self.note(f"table_broken:{t.number}", TableBroken(table_number=t.number))
                await self.send(t, finish=True)
            elif not hold and len(t.seats) >= 2:
                await self.send(t)
        await self.publish_events()

    # -- late registration ----------------------------------------------------------------
    def late_open(self) -> LateRegistration | None:
        """The late registration while it is open (None otherwise, and for every MTT without
        it: its code paths below are reached only by ``lateRegistrationSeconds`` above 0)."""
        late = self.books.s.late
        return late if late is not None and late.open else None

    async def seat_late(self, player: str) -> None:
        """A late entry (or re-entry) just paid: the starting stack, a seat at one of the
        tables with the fewest players (``seat_late_entrant``, TDA Rule 8A), then each table
        standing at its boundary gets its order as after a hand. At a table that is dealing
        the entry is held in transit, as a move is, and sits down at that table's next
        boundary; with every table full it opens the next table, which waits for players."""
        b = self.books
        s = b.settings
        m = self.m
        running = [t for t in m.tables.values() if not t.done]
        tables = []
        for t in running:
            seats = dict(t.seats)
            seats.update({i.to_seat: i.player_id for i in m.in_transit if i.to_table == t.number})
            last = ButtonPositions.from_dict(t.positions) if t.positions else None
            tables.append(Table(t.number, seats, last))
        placement = seat_late_entrant(
            tables, player, seats=s.seats, randbelow=workflow.random().randrange
        )
        b.s.stacks[player] = s.starting_stack
        b.s.field_size = (b.s.field_size or 0) + 1
        m.late_entries += 1
        if placement.opens_table:
            await self.open_table(player, placement.seat)
            await self.after_hand()
            return
        target = m.tables[placement.table_id]
        if target.at_boundary:
            self.sit(target, placement.seat, player, s.starting_stack, waits=placement.waits)
        else:
            m.in_transit.append(
                InTransit(
                    player_id=player,
                    to_table=target.number,
                    to_seat=placement.seat,
                    stack=s.starting_stack,
                )
            )
            b.s.entrants[player].seat = placement.seat
        await self.after_hand()

    async def open_table(self, player: str, seat: int) -> None:
        """A table for late entrants once every table is full, numbered after every table
        so far (numbers are never reused): started empty, standing at its first boundary
        (hand 0) until its order seats two or more.

        Starting it takes commands that play's loop may run between: until the table is in
        the books the entry is held in transit to it (its chips counted, the field's live
        count including it, so the tournament cannot end meanwhile), and a force-end
        requested meanwhile stops it too."""
        b = self.books
        m = self.m
        number = max(m.tables) + 1
        stack = b.s.stacks[player]
        waiting = InTransit(player_id=player, to_table=number, to_seat=seat, stack=stack)
        m.in_transit.append(waiting)
        wid = table_workflow_id(b.s.tournament_id, number)
        secret = await effects.new_report_secret(wid)
        await workflow.start_child_workflow(
            TableWorkflow.run,
            TableState(
                table_id=wid,
                tournament_id=b.s.tournament_id,
                parent_workflow_id=workflow.info().workflow_id,
                seat_count=b.settings.seats,
                settings=b.raw_settings,
                play_start_ms=b.s.play_start_ms or 0,
                seats=[],
                hand_pause_ms=b.inp.hand_pause_ms,
                report_secret=secret,
                report_mac=True,
                managed=ManagedTable(number=number, opened_late=True),
            ),
            id=wid,
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"table {number} of tournament {b.s.tournament_id}",
        )
        table = MttTable(number=number, workflow_id=wid, secret=secret, at_boundary=True)
        m.tables[number] = table
        m.in_transit.remove(waiting)
        self.sit(table, seat, player, stack, waits=False)
        if b.s.stop_sent:
            await self.stop(table)

    def place_held(self) -> list[Placing]:
        """The close of late registration: the busts held while it was open are placed below
        every entry still in, the later report higher, one report's busts as one hand's
        (``order_busts``: the deeper starting stack higher, equal stacks tied)."""
        late = self.books.s.late
        assert late is not None
        alive = sum(1 for chips in self.books.s.stacks.values() if chips > 0)
        placed: list[Placing] = []
        for group in range(late.groups, 0, -1):
            busts = [h for h in late.held if h.group == group]
            if not busts:
                continue
            hand_of = {h.player_id: h.hand_no for h in busts}
            for f in order_busts(
                [(h.player_id, h.stack_before) for h in busts], alive_before=alive + len(busts)
            ):
                placed.append(
                    Placing(
                        player_id=f.entrant,
                        place=f.place,
                        rank=f.rank,
                        hand_number=hand_of[f.entrant],
                    )
                )
            alive += len(busts)
        late.held = []
        return placed

    # -- hand-for-hand rounds -------------------------------------------------------------
    def round_open(self) -> bool:
        """A table still deals the open hand-for-hand round's hand."""
        return any(t.in_round for t in self.m.tables.values() if not t.done)

    def close_round(self) -> list[Placing]:
        """Place the closed round's busts together (``place_round``: below every player
        still in; at one table by starting stack, across tables tied), each with its own
        table's hand number. Also at a force-end, for the tables that reported the round."""
        m = self.m
        if not m.round_busts:
            return []
        hand_of = {r.player_id: r.hand_no for r in m.round_busts}
        placed = place_round(
            [RoundBust(r.player_id, r.table, r.stack_before) for r in m.round_busts],
            alive_after=sum(1 for chips in self.books.s.stacks.values() if chips > 0),
        )
        m.round_busts = []
        for t in m.tables.values():
            t.in_round = False
        return [
            Placing(player_id=f.entrant, place=f.place, rank=f.rank, hand_number=hand_of[f.entrant])
            for f in placed
        ]

    def plan(self, running: list[MttTable]) -> tuple[list[Move], frozenset[str]]:
        """``plan_boundary`` over every running table (entries in transit counted at the
        table they go to), keeping the moves that can be made now: those from a table at its
        boundary to a seat free once they stood up (the others are planned again at their
        table's boundary)."""
        m = self.m
        tables = []
        for t in running:
            seats = dict(t.seats)
            seats.update({i.to_seat: i.player_id for i in m.in_transit if i.to_table == t.number})
            last = ButtonPositions.from_dict(t.positions) if t.positions else None
            tables.append(Table(t.number, seats, last))
        plan = plan_boundary(
            tables, seats=self.books.settings.seats, randbelow=workflow.random().randrange
        )
        moves = [mv for mv in plan.moves if m.tables[mv.from_table].at_boundary]
        while True:
            leaving = {(mv.from_table, mv.from_seat) for mv in moves}
            blocked = [
                mv
                for mv in moves
                if (
                    mv.to_seat in m.tables[mv.to_table].seats
                    and (mv.to_table, mv.to_seat) not in leaving
                )
                or any(i.to_table == mv.to_table and i.to_seat == mv.to_seat for i in m.in_transit)
            ]
            if not blocked:
                return moves, plan.waits
            moves = [mv for mv in moves if mv not in blocked]

    def apply(self, moves: list[Move], waits: frozenset[str]) -> None:
        """Stand every mover up, then seat every mover: at a table standing at a boundary
        by its order, at a dealing table by holding the entry in transit."""
        m = self.m
        stacks = self.books.s.stacks
        away: dict[str, bool] = {}  # each mover sitting out where they sat: it travels
        for mv in moves:
            source = m.tables[mv.from_table]
            assert source.seats[mv.from_seat] == mv.entrant
            del source.seats[mv.from_seat]
            away[mv.entrant] = mv.entrant in source.away
            if away[mv.entrant]:
                source.away.remove(mv.entrant)
            unsent = [a for a in source.arrive if a.player_id == mv.entrant]
            if unsent:
                # Seated by an order not sent yet (the table was held): he never sat there.
                source.arrive.remove(unsent[0])
                away[mv.entrant] = unsent[0].sitting_out
            else:
                source.stand_up.append(mv.from_seat)
        for mv in moves:
            target = m.tables[mv.to_table]
            m.moves[mv.reason.value] = m.moves.get(mv.reason.value, 0) + 1
            self.note(
                f"player_moved:{sum(m.moves.values())}",
                PlayerMoved(
                    player_id=mv.entrant,
                    from_table=mv.from_table,
                    to_table=mv.to_table,
                    seat=mv.to_seat,
                    reason=mv.reason.value,
                ),
            )
            if target.at_boundary:
                held = mv.entrant in waits
                self.sit(
                    target,
                    mv.to_seat,
                    mv.entrant,
                    stacks[mv.entrant],
                    waits=held,
                    sitting_out=away[mv.entrant],
                )
            else:
                m.in_transit.append(
                    InTransit(
                        player_id=mv.entrant,
                        to_table=target.number,
                        to_seat=mv.to_seat,
                        stack=stacks[mv.entrant],
                        sitting_out=away[mv.entrant],
                    )
                )
            self.books.s.entrants[mv.entrant].seat = mv.to_seat

    def sit(
        self,
        table: MttTable,
        seat: int,
        player: str,
        stack: int,
        *,
        waits: bool | None,
        sitting_out: bool = False,
    ) -> None:
        """Seat ``player`` at a table standing at its boundary (in its next order);
        ``sitting_out``: they were sitting out where they left, and arrive so."""
        assert seat not in table.seats, f"seat {seat} of table {table.number} is taken"
        table.seats[seat] = player
        if waits is None:  # arriving from transit: the button is where it is now
            last = ButtonPositions.from_dict(table.positions) if table.positions else None
            waits = waits_for_button(
                Table(table.number, dict(table.seats), last), seat, self.books.settings.seats
            )
        table.arrive.append(
            ArrivingSeat(
                seat=seat, player_id=player, stack=stack, waits=waits, sitting_out=sitting_out
            )
        )
        self.books.s.entrants[player].seat = seat

    async def send(self, table: MttTable, *, finish: bool = False) -> None:
        """The table's order for its boundary: who stands up, who sits down, whether it
        finishes; then it deals on (or ends)."""
        order = BoundaryOrder(
            table_id=table.workflow_id,
            hand_no=table.hands,
            stand_up=sorted(table.stand_up),
            arrive=table.arrive,
            finish=finish,
            redraw_button=table.redraw_button and not finish,
        )
        table.stand_up, table.arrive = [], []
        if table.redraw_button:
            table.redraw_button = False
            table.positions = None
        if finish:
            order.stand_up = sorted({*order.stand_up, *table.seats})
            order.arrive = []
            table.seats = {}
            table.done = True
        order.mac = report_mac(table.secret, BOUNDARY, table.workflow_id, table.hands, order)
        table.at_boundary = False
        # Sent while hand-for-hand holds, every table at once: its next hand is the round's.
        table.in_round = self.round_places and self.m.hand_for_hand and not finish
        await workflow.get_external_workflow_handle_for(
            TableWorkflow.run, table.workflow_id
        ).signal(TableWorkflow.boundary, order)

    # -- the invariants ------------------------------------------------------------------
    def check_books(self) -> None:
        """Every live entry on exactly one table or in transit; every chip counted."""
        b = self.books
        expected = (b.s.field_size or 0) * b.settings.starting_stack
        fault = books_fault(self.m, b.s.stacks, expected)
        if fault is not None:
            raise RuntimeError(f"MTT books broken after {self.m.boundaries} boundaries: {fault}")

    # -- force-end -----------------------------------------------------------------------
    async def stop_all(self) -> None:
        """A force-end: every table still running stops and returns its stacks."""
        # A copy: a table a late entrant opens while the stops go out is added meanwhile
        # (and stopped by ``open_table``).
        for t in list(self.m.tables.values()):
            if not t.done:
                await self.stop(t)

    async def stop(self, t: MttTable) -> None:
        order = StopOrder(table_id=t.workflow_id)
        order.mac = report_mac(t.secret, STOP, order.table_id, 0, order)
        await workflow.get_external_workflow_handle_for(TableWorkflow.run, t.workflow_id).signal(
            TableWorkflow.stop, order
        )


def books_fault(books: MttBooks, stacks: dict[str, int], expected: int) -> str | None:
    """What is wrong with an MTT's books, if anything: every live entry (chips above 0) sits
    at exactly one table or is in transit, and the chips at the tables and in transit add up
    to ``expected`` (entrants × starting stack). A table that finished by order has no seats
    left; one a force-end stopped keeps its seats (their chips are the books'), and a report
    it sent before the stop reached it may still be taken after its result.

    >>> t = MttTable(number=1, workflow_id="t-1", secret="", seats={0: "a", 1: "b"})
    >>> books_fault(MttBooks(tables={1: t}), {"a": 5, "b": 5, "c": 0}, 10) is None
    True
    >>> books_fault(MttBooks(tables={1: t}), {"a": 5, "b": 4, "c": 1}, 10)
    'live entries nowhere: c; 9 chips of 10'
    >>> stopped = t.model_copy(update={"done": True})
    >>> books_fault(MttBooks(tables={1: stopped}), {"a": 5, "b": 5}, 10) is None
    True
    """
    where = [p for t in books.tables.values() for p in t.seats.values()]
    where += [i.player_id for i in books.in_transit]
    alive = {p for p, chips in stacks.items() if chips > 0}
    faults = []
    # Counted once over the field: ``where.count`` per entry was quadratic (0.7 s a boundary
    # at 10,000 entrants, docs/capacity.md).
    twice = sorted(p for p, n in Counter(where).items() if n > 1)
    if twice:
        faults.append(f"in two places: {', '.join(twice)}")
    if missing := sorted(alive - set(where)):
        faults.append(f"live entries nowhere: {', '.join(missing)}")
    if out := sorted(set(where) - alive):
        faults.append(f"seated without chips: {', '.join(out)}")
    if moved := sorted(i.player_id for i in books.in_transit if stacks.get(i.player_id) != i.stack):
        faults.append(f"in transit with other chips than the books: {', '.join(moved)}")
    chips = sum(stacks.get(p, 0) for t in books.tables.values() for p in t.seats.values())
    chips += sum(i.stack for i in books.in_transit)
    if chips != expected:
        faults.append(f"{chips} chips of {expected}")
    return "; ".join(faults) or None
