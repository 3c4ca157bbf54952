"""What the lobby, tournament, room and results pages show, read the way the JSON API reads
it: lists from the read model (``tournaments``, ``entrants``, ``rooms``, ``hands``), one
tournament through ``GET /tournaments/{id}``'s own shared record (api/services/tournaments.py),
one room through ``GET /rooms/{id}``'s record. Nothing here decides anything: the pages'
actions are calls to the JSON API from the browser (``static/api.js``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from sqlalchemy import ColumnElement, and_, func, or_
from sqlmodel import col, select

from api.hand_records import served_record
from api.services import tournaments
from api.services.rooms import RoomRecord, records
from api.services.tournaments import TournamentDetail
from api.state import state_of
from db import ledger
from db.engine import Database
from db.models import Entrant, Hand, Room, Tournament
from domain.errors import DomainError
from domain.payouts import resolve_payout_amounts, resolved_prize_structure
from domain.schedule import schedule_preview
from domain.settings import TournamentSettings, validate_settings

LIST_LIMIT = 100
"""Rows per list on the lobby (newest first)."""
PREVIEW_LEVELS = 3
"""Blind levels a lobby card previews before "…and it continues"."""
HAND_LIMIT = 500
"""Hands a results page lists (a Sit-and-Go plays far fewer)."""

KIND_LABELS = {
    "open": "Open to all",
    "human_only": "People only",
    "agent": "Agents only",
    "copilot": "People with a CoPilot",
}
"""The audiences (``kind``) as a person reads them."""

TOURNAMENT_STATES = {
    "open": ("registering",),
    "running": ("starting", "playing"),
    "finished": ("ended", "settling", "closed", "cancelled"),
}
ROOM_STATES = {
    "open": ("waiting", "playing", "paused"),
    "running": ("playing",),
    "finished": ("closed",),
}
"""The lobby's ``state`` filter: which tournament states and room statuses it selects."""


@dataclass(frozen=True, slots=True)
class Filters:
    """The lobby's GET form: ``kind`` (an audience or all), ``venue`` (tournaments, rooms or
    both), ``state`` (open, running, finished). Unknown values fall back to the defaults."""

    kind: str = ""
    venue: str = ""
    state: str = "open"

    @classmethod
    def parse(cls, request: Request) -> Filters:
        q = request.query_params
        kind = q.get("kind", "")
        venue = q.get("venue", "")
        state = q.get("state", "open")
        return cls(
            kind=kind if kind in KIND_LABELS else "",
            venue=venue if venue in ("tournaments", "rooms") else "",
            state=state if state in TOURNAMENT_STATES else "open",
        )

    def query(self) -> str:
        parts = [f"{k}={v}" for k, v in (("kind", self.kind), ("venue", self.venue)) if v]
        return "&".join([*parts, f"state={self.state}"])


@dataclass(slots=True)
class Place:
    position: int
    share: float
    amount: int


@dataclass(slots=True)
class TournamentCard:
    id: str
    name: str
    kind: str
    state: str
    seats: int
    taken: int
    entry_fee: int
    starting_stack: int
    levels: list[Any]
    places: list[Place]
    field_size: int
    entrants: list[str] = field(default_factory=list)
    max_entrants: int | None = None
    """A multi-table tournament's bound on entries (None: a Sit-and-Go, the field is ``seats``)."""
    late_until_ms: int | None = None
    """A running MTT whose late registration is open: when it closes (epoch ms)."""
    re_entries: int = 0
    """Re-entries a busted player may make while late registration is open."""


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


def payout_places(settings: TournamentSettings, field_size: int) -> list[Place]:
    """The prize structure at this field: each paid place's share and chips."""
    try:
        shares = resolved_prize_structure(settings, field_size)
        amounts = resolve_payout_amounts(settings, field_size)
    except DomainError:
        return []
    return [
        Place(position=p.position, share=p.share, amount=a)
        for p, a in zip(shares, amounts, strict=False)
    ]


def late_until_ms(row: Tournament, now_ms: int) -> int | None:
    """When a running MTT's late registration closes, if it is open at ``now_ms``: its
    durable timer fires at play's start plus ``lateRegistrationSeconds`` (docs/mtt.md). Read
    from the list's own row, so the lobby asks nothing more per card; the tournament's page
    reads the workflow's published answer (``mtt.lateRegistrationOpen``) before offering
    Register, and the workflow itself decides."""
    seconds = int(row.settings.get("lateRegistrationSeconds") or 0)
    if row.state != "playing" or seconds <= 0 or row.play_started_at is None:
        return None
    closes = int(row.play_started_at.timestamp() * 1000) + seconds * 1000
    return closes if closes > now_ms else None


def _card(row: Tournament, entrants: list[str]) -> TournamentCard | None:
    try:
        settings = validate_settings(row.settings)
    except DomainError:  # pragma: no cover - the workflow validated them at creation
        return None
    size = row.field_size or settings.max_entrants or row.seats
    mtt = settings.max_entrants is not None and settings.max_entrants > row.seats
    return TournamentCard(
        id=row.id,
        name=row.name,
        kind=row.kind,
        state=row.state,
        seats=row.seats,
        # A sealed MTT counts entries (re-entries too) against ``maxEntrants``.
        taken=row.field_size if mtt and row.field_size else row.registered_count,
        entry_fee=row.entry_fee,
        starting_stack=row.starting_stack,
        levels=schedule_preview(
            settings, from_level=row.current_level, count=PREVIEW_LEVELS
        ).levels,
        places=payout_places(settings, size),
        field_size=size,
        entrants=entrants,
        max_entrants=settings.max_entrants if mtt else None,
        late_until_ms=late_until_ms(row, int(time.time() * 1000)),
        re_entries=settings.max_re_entries,
    )


async def tournament_cards(db: Database, filters: Filters) -> list[TournamentCard]:
    if filters.venue == "rooms":
        return []
    states: ColumnElement[bool] = col(Tournament.state).in_(TOURNAMENT_STATES[filters.state])
    if filters.state == "open":
        # Open for entries: registering, and the running MTTs whose late registration is
        # open (those with a window are picked here, the closed ones dropped below).
        states = or_(
            states,
            and_(
                col(Tournament.state) == "playing",
                func.jsonb_exists(col(Tournament.settings), "lateRegistrationSeconds"),
            ),
        )
    query = (
        select(Tournament)
        .where(states)
        .order_by(col(Tournament.created_at).desc())
        .limit(LIST_LIMIT)
    )
    if filters.kind:
        query = query.where(Tournament.kind == filters.kind)
    now_ms = int(time.time() * 1000)
    async with db.session() as session:
        rows = [
            r
            for r in await session.exec(query)
            if r.state != "playing" or filters.state != "open" or late_until_ms(r, now_ms)
        ]
        ids = [r.id for r in rows]
        names: dict[str, list[str]] = {}
        if ids:
            entrants = await session.exec(
                select(Entrant)
                .where(col(Entrant.tournament_id).in_(ids), Entrant.status != "released")
                .order_by(col(Entrant.registered_at))
            )
            for e in entrants:
                names.setdefault(e.tournament_id, []).append(e.player_id)
    cards = [_card(r, names.get(r.id, [])) for r in rows]
    return [c for c in cards if c is not None]


async def room_cards(db: Database, filters: Filters) -> list[RoomRecord]:
    if filters.venue == "tournaments":
        return []
    query = (
        select(Room)
        .where(col(Room.status).in_(ROOM_STATES[filters.state]))
        .order_by(col(Room.created_at).desc())
        .limit(LIST_LIMIT)
    )
    if filters.kind:
        query = query.where(Room.kind == filters.kind)
    async with db.session() as session:
        rows = list(await session.exec(query))
    return await records(db, rows)


async def balance_of(db: Database, owner: str) -> int:
    """The person's balance: ``GET /me/balance``'s account."""
    return await ledger.balance(db, ledger.user_account(owner))


async def tournament_exists(db: Database, tournament_id: str) -> bool:
    async with db.session() as session:
        return await session.get(Tournament, tournament_id) is not None


async def tournament(request: Request, tournament_id: str) -> TournamentDetail:
    """``GET /tournaments/{id}``'s answer, through its per-replica shared view."""
    return await tournaments.public_record(state_of(request.app), tournament_id)


async def room(db: Database, room_id: str) -> RoomRecord | None:
    async with db.session() as session:
        row = await session.get(Room, room_id)
    return None if row is None else (await records(db, [row]))[0]


@dataclass(slots=True)
class HandLine:
    number: int
    level: int
    board: list[str]
    winners: list[str]
    mine: bool
    cards: list[str] = field(default_factory=list)
    """The reader's own hole cards (only in their own hands)."""
    net: int = 0
    """The reader's stack after minus before (their own hands)."""


async def hand_lines(request: Request, tournament_id: str, reader: str) -> list[HandLine]:
    """Every finished hand of the tournament, oldest first; the reader's own hands with their
    cards and result, read as ``GET /tournaments/{id}/hands/{n}`` serves them to the reader."""
    db: Database = state_of(request.app).db
    codec = state_of(request.app).read_model.codec
    async with db.session() as session:
        hands = list(
            await session.exec(
                select(Hand)
                .where(Hand.tournament_id == tournament_id, col(Hand.hand_no) > 0)
                .order_by(col(Hand.hand_no))
                .limit(HAND_LIMIT)
            )
        )
    lines = []
    for hand in hands:
        record = hand.record
        players = {str(k): str(v) for k, v in record.get("players", {}).items()}
        winners = sorted(
            {
                players.get(str(w), str(w))
                for pot in record.get("pots", [])
                for w in pot.get("winners", [])
            }
        )
        seat = next((s for s, p in players.items() if p == reader), None)
        line = HandLine(
            number=hand.hand_no,
            level=hand.level,
            board=list(record.get("board", [])),
            winners=winners,
            mine=seat is not None,
        )
        if seat is not None:
            served = served_record(record, reader, codec)
            # The reader's own cards: ``yourCards`` (opened from the seat's sealed part), or
            # ``holeCards`` for a hand from before card commitments.
            own = served.get("yourCards") or {"cards": served.get("holeCards", {}).get(seat, [])}
            line.cards = list(own["cards"])
            after = served.get("stacksAfter", {}).get(seat, 0)
            line.net = int(after) - int(served.get("stacksBefore", {}).get(seat, 0))
        lines.append(line)
    return lines
