"""Cash rooms (the tiny.place seed's "Rooms & Gameplay"): the record's rules, pure.

A room is a persistent table with a fixed virtual-chip entry: joining reserves the entry from
the player's balance and it becomes the table stack; leaving returns what is left. Blinds are
the room's fixed stakes (no level clock). This module validates what an operator creates,
names the speeds, derives a room's status from its seats, and turns a finished hand into its
settlement (the ledger legs, gross pot and net to winner) and a running hand into the room
stream's events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from domain.errors import DomainError, ErrorCode
from domain.settings import TableKind

MIN_SEATS, MAX_SEATS = 2, 9
IDLE_CLOSE_SECONDS = 30 * 60
"""A room with no hands and no seated players for this long closes itself."""
SAT_OUT_HANDS_LIMIT = 3
"""Sitting out this many consecutive hands removes the player (the stack goes home)."""
MAX_ENTRY = 10**12
"""The largest entry and blind (the API's body bounds come from here too)."""
MAX_NAME = 200
CURRENCY = "virtual_chips"
REJOIN_COOLDOWN_MAX_SECONDS = 600
"""The longest a player who left waits before joining the same room again."""
LEAVE_STREAK_RESET_SECONDS = 60 * 60
"""A leave this long after the player's previous one starts the cooldown afresh."""


def leave_streak(previous_left_ms: int | None, previous_streak: int, now_ms: int) -> int:
    """How many leaves in a row this one makes: each within an hour of the one before.

    >>> leave_streak(None, 0, 5_000), leave_streak(1_000, 1, 5_000)
    (1, 2)
    >>> leave_streak(1_000, 4, 1_000 + LEAVE_STREAK_RESET_SECONDS * 1000)
    1
    """
    if previous_left_ms is None or now_ms - previous_left_ms >= LEAVE_STREAK_RESET_SECONDS * 1000:
        return 1
    return previous_streak + 1


def rejoin_wait_ms(left_ms: int, streak: int, base_seconds: int, now_ms: int) -> int:
    """How long a player who left at ``left_ms`` (their ``streak``-th leave in a row) still
    waits before joining that room again: ``base_seconds``, doubling with each leave in a row,
    at most ``REJOIN_COOLDOWN_MAX_SECONDS`` (security review N2: join/leave cycles).

    >>> [rejoin_wait_ms(0, n, 10, 0) for n in (1, 2, 3)]
    [10000, 20000, 40000]
    >>> rejoin_wait_ms(0, 30, 10, 0), rejoin_wait_ms(0, 1, 10, 12_000), rejoin_wait_ms(0, 5, 0, 0)
    (600000, 0, 0)
    """
    doubling: int = 2 ** min(max(streak - 1, 0), 20)
    cooldown_s = min(base_seconds * doubling, REJOIN_COOLDOWN_MAX_SECONDS)
    return max(0, left_ms + cooldown_s * 1000 - now_ms)


class Speed(StrEnum):
    TURBO = "turbo"
    NORMAL = "normal"
    SLOW = "slow"


TIMEOUTS: dict[Speed, tuple[int, int]] = {
    Speed.TURBO: (10, 30),
    Speed.NORMAL: (30, 60),
    Speed.SLOW: (120, 300),
}
"""(decision timeout, disconnect grace) in seconds, the seed's table of speeds."""


class RoomStatus(StrEnum):
    WAITING = "waiting"
    """Fewer than 2 players able to play, and no hand dealt yet."""
    PLAYING = "playing"
    PAUSED = "paused"
    """Hands were played, and fewer than 2 players are able to play now."""
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class RoomRules:
    name: str
    entry: int
    small_blind: int
    big_blind: int
    seats: int
    speed: Speed
    kind: TableKind = TableKind.OPEN
    """Who may sit: the tournaments' four audiences and their gate
    (``domain.registration.verify_seat_allowed``)."""

    @property
    def decision_timeout(self) -> int:
        return TIMEOUTS[self.speed][0]

    @property
    def disconnect_grace(self) -> int:
        return TIMEOUTS[self.speed][1]


def _int(raw: Mapping[str, Any], key: str, low: int, high: int, field: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise DomainError(ErrorCode.INVALID_SETTINGS, f"{field} must be an integer", field=field)
    if not low <= value <= high:
        raise DomainError(ErrorCode.INVALID_SETTINGS, f"{field} must be {low}–{high}", field=field)
    return value


def validate_room(raw: Mapping[str, Any]) -> RoomRules:
    """An operator's room (wire names), checked; raises ``invalid_settings`` naming the field.

    >>> r = validate_room({"name": "Main", "entry": {"amount": 1000},
    ...     "stakes": {"smallBlind": 5, "bigBlind": 10}, "seats": 6})
    >>> (r.entry, r.big_blind, r.speed.value, r.decision_timeout, r.disconnect_grace, r.kind.value)
    (1000, 10, 'normal', 30, 60, 'open')
    >>> validate_room({"name": "x", "entry": {"amount": 5},
    ...     "stakes": {"smallBlind": 5, "bigBlind": 10}, "seats": 6})
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: entry.amount must cover at least one big blind (10)
    """
    name = raw.get("name")
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME
        or not name.isprintable()
    ):
        raise DomainError(
            ErrorCode.INVALID_SETTINGS, f"name: 1–{MAX_NAME} printable characters", field="name"
        )
    entry = raw.get("entry")
    stakes = raw.get("stakes")
    if not isinstance(entry, Mapping):
        raise DomainError(ErrorCode.INVALID_SETTINGS, "entry must be an object", field="entry")
    if not isinstance(stakes, Mapping):
        raise DomainError(ErrorCode.INVALID_SETTINGS, "stakes must be an object", field="stakes")
    currency = entry.get("currency", CURRENCY)
    if currency != CURRENCY:
        raise DomainError(
            ErrorCode.INVALID_SETTINGS,
            f"rooms take {CURRENCY} only",
            field="entry.currency",
        )
    amount = _int(entry, "amount", 1, MAX_ENTRY, "entry.amount")
    small = _int(stakes, "smallBlind", 1, MAX_ENTRY, "stakes.smallBlind")
    big = _int(stakes, "bigBlind", 1, MAX_ENTRY, "stakes.bigBlind")
    if big < small:
        raise DomainError(
            ErrorCode.INVALID_SETTINGS,
            "stakes.bigBlind must be at least stakes.smallBlind",
            field="stakes.bigBlind",
        )
    if amount < big:
        raise DomainError(
            ErrorCode.INVALID_SETTINGS,
            f"entry.amount must cover at least one big blind ({big})",
            field="entry.amount",
        )
    seats = _int(raw, "seats", MIN_SEATS, MAX_SEATS, "seats")
    speed_raw = raw.get("speed", Speed.NORMAL.value)
    try:
        speed = Speed(speed_raw)
    except ValueError:
        raise DomainError(
            ErrorCode.INVALID_SETTINGS, "speed: turbo, normal or slow", field="speed"
        ) from None
    try:
        kind = TableKind(raw.get("kind", TableKind.OPEN.value))
    except ValueError:
        raise DomainError(
            ErrorCode.INVALID_SETTINGS,
            "kind: " + ", ".join(k.value for k in TableKind),
            field="kind",
        ) from None
    return RoomRules(name.strip(), amount, small, big, seats, speed, kind)


def status_for(*, able: int, hands_played: int, closed: bool) -> RoomStatus:
    """The status a room shows between hands, from how many players could be dealt in.

    >>> status_for(able=1, hands_played=0, closed=False).value
    'waiting'
    >>> status_for(able=1, hands_played=4, closed=False).value
    'paused'
    >>> status_for(able=3, hands_played=4, closed=False).value
    'playing'
    """
    if closed:
        return RoomStatus.CLOSED
    if able >= 2:
        return RoomStatus.PLAYING
    return RoomStatus.PAUSED if hands_played else RoomStatus.WAITING


@dataclass(frozen=True, slots=True)
class Settlement:
    gross_pot: int
    net_to_winner: dict[int, int]
    """Seat → chips taken from the pots (no rake: the whole pot goes to the winners)."""
    deltas: dict[int, int]
    """Seat → stack after minus stack before: the hand's ledger legs (they sum to zero)."""

    def to_wire(self) -> dict[str, Any]:
        return {
            "grossPot": self.gross_pot,
            "netToWinner": {str(seat): chips for seat, chips in self.net_to_winner.items()},
            "rake": 0,
        }


def settle(record: Mapping[str, Any]) -> Settlement:
    """The settlement of a finished hand's record (``domain.holdem.hand_record``).

    >>> rec = {"pots": [{"amount": 300, "winners": {"0": 300}}],
    ...        "stacks_before": {"0": 1000, "1": 1000}, "stacks_after": {"0": 1150, "1": 850}}
    >>> s = settle(rec)
    >>> (s.gross_pot, s.net_to_winner, s.deltas)
    (300, {0: 300}, {0: 150, 1: -150})
    """
    gross = sum(int(pot["amount"]) for pot in record["pots"])
    won: dict[int, int] = {}
    for pot in record["pots"]:
        for seat, share in pot["winners"].items():
            won[int(seat)] = won.get(int(seat), 0) + int(share)
    deltas = {
        int(seat): int(record["stacks_after"][seat]) - int(before)
        for seat, before in record["stacks_before"].items()
    }
    if sum(deltas.values()) != 0 or sum(won.values()) != gross:
        raise DomainError(ErrorCode.INVALID_STATE, "a room hand must conserve chips (no rake)")
    return Settlement(gross, won, {s: d for s, d in deltas.items() if d})


@dataclass(frozen=True, slots=True)
class StreamCursor:
    """How much of the running hand the room stream has already been told."""

    actions: int = 0
    board: int = 0
    pot: int = 0


def hand_events(
    hand_no: int, view: Mapping[str, Any], cursor: StreamCursor
) -> tuple[list[tuple[str, str, dict[str, Any]]], StreamCursor]:
    """The stream events a running hand's public view adds since ``cursor``: each action, each
    new street's cards and the pot when it moved, as (type, dedupe key, payload).

    >>> view = {"actions": [{"street": "preflop", "seat": 0, "action": "call", "amount": 10,
    ...     "all_in": False}], "board": [], "pot": 20, "turn": 1}
    >>> events, cur = hand_events(7, view, StreamCursor())
    >>> [(t, k) for t, k, _ in events]
    [('action', 'h7:a0'), ('pot_update', 'h7:p20:1')]
    >>> hand_events(7, view, cur)[0]
    []
    """
    events: list[tuple[str, str, dict[str, Any]]] = []
    actions: Sequence[Mapping[str, Any]] = view["actions"]
    for index in range(cursor.actions, len(actions)):
        entry = actions[index]
        events.append(
            (
                "action",
                f"h{hand_no}:a{index}",
                {
                    "handNumber": hand_no,
                    "seat": entry["seat"],
                    "street": entry["street"],
                    "action": entry["action"],
                    "amount": entry["amount"],
                    "allIn": entry["all_in"],
                    # The table acted for the player (timeout, sitting out, leaving).
                    **({"auto": entry["auto"]} if "auto" in entry else {}),
                },
            )
        )
    board: Sequence[str] = view["board"]
    # A run-out (everyone all in) shows several streets at once: one event per street.
    for size, street in ((3, "flop"), (4, "turn"), (5, "river")):
        if cursor.board < size <= len(board):
            payload = {
                "handNumber": hand_no,
                "street": street,
                "cards": list(board[0 if size == 3 else size - 1 : size]),
                "board": list(board[:size]),
            }
            events.append(("community_cards", f"h{hand_no}:b{size}", payload))
    pot = int(view["pot"])
    if pot and pot != cursor.pot:
        events.append(
            (
                "pot_update",
                f"h{hand_no}:p{pot}:{view['turn']}",
                {"handNumber": hand_no, "pot": pot},
            )
        )
    return events, StreamCursor(len(actions), len(board), pot or cursor.pot)
