"""What a multi-table tournament's admin page shows of its tables: each table's seats, stacks
and button, the entries in transit, late registration, and the moves from the event log.

Read from the read model only (docs/admin.md, "A multi-table tournament"): the tournament's
published view (``TournamentView.mtt``: the tables still playing, hand-for-hand, the final
table, late registration), each table's own published state (``read_states``, one indexed
read of the tables' keys) and the ``events`` log. No Temporal query on the request path: the
workflow's ``tables`` query would land on the busiest workflow of the deployment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import bindparam, text
from sqlmodel import col, select

from db.engine import Database
from db.models import Event
from wire.events import MTT_EVENTS
from wire.messages import TournamentView
from wire.table_messages import TableView

MOVES_SHOWN = 200
"""The newest MTT events the page lists (a 10,000-entrant field makes thousands of moves)."""
MTT_EVENT_TYPES = tuple(e.TYPE for e in MTT_EVENTS)


@dataclass(frozen=True, slots=True)
class SeatRow:
    seat: int
    """From 1, as a person counts (the wire's seats count from 0)."""
    player_id: str
    stack: int
    button: bool
    sitting_out: bool


@dataclass(frozen=True, slots=True)
class TableRow:
    number: int
    table_id: str
    hand_no: int | None
    """The hand it is dealing or dealt last; None: it has published nothing yet."""
    seats: list[SeatRow]


@dataclass(frozen=True, slots=True)
class MoveRow:
    at: datetime
    type: str
    text: str


@dataclass(slots=True)
class MttPage:
    tables: list[TableRow]
    in_transit: list[tuple[str, int, int | None]]
    """Live entries that no table's published state seats: moving between tables, or a late
    entry waiting for its table's boundary (player, chips, the table they go to as the
    tournament's view has it; None: its view has them seated already, a table's own state
    lagging)."""
    hand_for_hand: bool
    final_table: bool
    late_open: bool
    late_closes_at_ms: int | None
    entries: int
    re_entries: int
    players_left: int
    in_round: set[int] = field(default_factory=set)
    """While hand-for-hand: the tables dealing the round's hand (the rest wait for it)."""
    moves: list[MoveRow] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)
    """Each entrant's place now, for the entrants' list: ``table 2, seat 3``, ``in transit``
    or ``out`` (an entrant's own ``seat`` is a seat at no particular table in an MTT)."""


def _seats(view: TableView) -> list[SeatRow]:
    button = view.hand.get("button") if view.hand else None
    return [
        SeatRow(
            seat=s.seat + 1,
            player_id=s.player_id,
            stack=s.stack,
            button=s.seat == button,
            sitting_out=s.sitting_out,
        )
        for s in sorted(view.seats, key=lambda s: s.seat)
    ]


async def _tables(db: Database, tables: dict[str, int]) -> list[TableRow]:
    if not tables:
        return []
    async with db.engine.connect() as conn:
        rows = (
            await conn.execute(
                text("SELECT key, public FROM read_states WHERE key IN :keys").bindparams(
                    bindparam("keys", expanding=True)
                ),
                {"keys": list(tables)},
            )
        ).all()
    published = {}
    for key, public in rows:
        try:
            published[str(key)] = TableView.model_validate(public["view"])
        except (KeyError, TypeError, ValidationError):  # pragma: no cover - tables write views
            continue  # shown as not dealt yet rather than failing the page
    out = []
    for key, number in sorted(tables.items(), key=lambda kv: kv[1]):
        view = published.get(key)
        out.append(
            TableRow(
                number=number,
                table_id=key,
                hand_no=view.hand_no if view is not None else None,
                seats=_seats(view) if view is not None else [],
            )
        )
    return out


def describe(kind: str, data: dict[str, Any]) -> str:
    """One MTT event as a sentence (the payloads of docs/events.md; seats count from 1 here).

    >>> describe("player_moved", {"playerId": "ann", "fromTable": 2, "toTable": 1, "seat": 0,
    ...                           "reason": "final"})
    'ann moved from table 2 to table 1, seat 1 (final table)'
    >>> describe("hand_for_hand", {"on": True, "playersLeft": 4})
    'Hand-for-hand began with 4 players left'
    """
    if kind == "player_moved":
        reason = {"balance": "balancing", "break": "table broken", "final": "final table"}
        return (
            f"{data['playerId']} moved from table {data['fromTable']} to table "
            f"{data['toTable']}, seat {int(data['seat']) + 1} "
            f"({reason.get(data['reason'], data['reason'])})"
        )
    if kind == "table_broken":
        return f"Table {data['tableNumber']} broke"
    if kind == "hand_for_hand":
        began = "began" if data.get("on") else "ended"
        return f"Hand-for-hand {began} with {data['playersLeft']} players left"
    if kind == "final_table":
        return f"The final table formed: {', '.join(data.get('players', []))}"
    if kind == "late_registration_closed":
        return (
            f"Late registration closed: {data['fieldSize']} entries, "
            f"prize pool {int(data['prizePool']):,}"
        )
    return kind


async def _moves(db: Database, tournament_id: str) -> list[MoveRow]:
    async with db.session() as session:
        rows = (
            await session.exec(
                select(Event)
                .where(Event.tournament_id == tournament_id, col(Event.type).in_(MTT_EVENT_TYPES))
                .order_by(col(Event.id).desc())
                .limit(MOVES_SHOWN)
            )
        ).all()
    return [MoveRow(at=e.created_at, type=e.type, text=describe(e.type, e.payload)) for e in rows]


async def mtt_page(db: Database, view: TournamentView) -> MttPage | None:
    """The MTT section of a tournament's admin page; None for a Sit-and-Go and for an MTT
    whose tables have not opened (its view publishes no ``mtt`` yet)."""
    published = view.mtt
    if published is None:
        return None
    tables = await _tables(db, published.tables)
    seated = {s.player_id for t in tables for s in t.seats}
    live = {p: chips for p, chips in view.stacks.items() if chips > 0}
    entries = view.field_size or view.paid_count
    return MttPage(
        tables=tables,
        in_transit=sorted(
            (p, c, published.in_transit.get(p)) for p, c in live.items() if p not in seated
        ),
        in_round=set(published.in_round),
        hand_for_hand=published.hand_for_hand,
        final_table=published.final_table,
        late_open=published.late_registration_open,
        late_closes_at_ms=published.late_registration_closes_at_ms,
        entries=entries,
        # Every paid entry is seated with a stack keyed by its player, kept at 0 once busted,
        # so the view's stacks name each player who entered once; the rest are re-entries.
        re_entries=max(0, entries - len(view.stacks)),
        players_left=len(live),
        moves=await _moves(db, view.tournament_id),
        where={
            **{p: "out" for p, chips in view.stacks.items() if chips <= 0},
            **{
                p: f"in transit to table {published.in_transit[p]}"
                if p in published.in_transit
                else "in transit"
                for p in live
                if p not in seated
            },
            **{s.player_id: f"table {t.number}, seat {s.seat}" for t in tables for s in t.seats},
        },
    )
