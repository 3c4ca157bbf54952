"""Poker Hand History (PHH, the uoftcprg standard) in and out of our engine.

``parse_phh`` reads the TOML-based text, ``replay_phh`` plays its actions through ``Hand`` (the
hole and board cards in the file are laid into a deck in our dealing order, unknown cards
``??`` filled from the unused ones), and ``to_phh`` writes one of our hand records back out with
seat names so pokerkit (or anyone) can load it.

Conventions taken from pokerkit: ``p1`` is the first seat left of the button; heads-up the list
of blinds (and antes) is given small-blind first but ``p1`` is the big blind; with
``ante_trimming_status = false`` antes are dead money in the main pot (our big-blind ante).
PHH knows no "blind before ante", so a big blind too short for both posts the ante first on
import — the only place a PHH replay can differ from our own big-blind-ante rule.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.errors import DomainError, ErrorCode
from domain.holdem.betting import ActionKind
from domain.holdem.cards import ALL_CARDS, board_indices, hole_card_index, is_card
from domain.holdem.hand import Hand

_UNKNOWN = "??"


class PhhReplayError(Exception):
    """An action in the file that our engine refuses: its index in ``actions`` and why."""

    def __init__(self, index: int, action: str, reason: str) -> None:
        super().__init__(f"action {index} ({action!r}): {reason}")
        self.index = index
        self.action = action
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PhhHand:
    variant: str
    antes: list[int]
    blinds_or_straddles: list[int]
    min_bet: int
    starting_stacks: list[int]
    actions: list[str]
    ante_trimming_status: bool = True
    players: list[str] | None = None
    finishing_stacks: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def parse_phh(text: str) -> PhhHand:
    """Read PHH text (TOML); fields we do not use are kept in ``extra``.

    >>> text = "\\n".join(["variant = 'NT'", "antes = [0, 0]", "blinds_or_straddles = [1, 2]",
    ...                    "min_bet = 2", "starting_stacks = [200, 200]", "actions = ['p2 f']"])
    >>> hand = parse_phh(text)
    >>> hand.variant, hand.starting_stacks, hand.actions
    ('NT', [200, 200], ['p2 f'])
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DomainError(ErrorCode.VALIDATION_ERROR, f"not a PHH file: {exc}") from None
    try:
        stacks = [int(s) for s in data["starting_stacks"]]
        count = len(stacks)

        def per_player(value: Any) -> list[int]:
            return [int(v) for v in value] if isinstance(value, list) else [int(value)] * count

        return PhhHand(
            variant=str(data["variant"]),
            antes=per_player(data.get("antes", 0)),
            blinds_or_straddles=per_player(data.get("blinds_or_straddles", 0)),
            min_bet=int(data.get("min_bet", 0)),
            starting_stacks=stacks,
            actions=[str(a) for a in data["actions"]],
            ante_trimming_status=bool(data.get("ante_trimming_status", True)),
            players=[str(p) for p in data["players"]] if "players" in data else None,
            finishing_stacks=data.get("finishing_stacks"),
            extra={k: v for k, v in data.items() if k not in _KNOWN_FIELDS},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DomainError(ErrorCode.VALIDATION_ERROR, f"incomplete PHH hand: {exc!r}") from None


_KNOWN_FIELDS = {
    "variant",
    "antes",
    "blinds_or_straddles",
    "min_bet",
    "starting_stacks",
    "actions",
    "ante_trimming_status",
    "players",
    "finishing_stacks",
}


def _words(action: str) -> list[str]:
    return action.split("#", 1)[0].split()


def _player(word: str, count: int) -> int:
    if not (word.startswith("p") and word[1:].isdigit() and 1 <= int(word[1:]) <= count):
        raise ValueError(f"unknown player {word!r}")
    return int(word[1:]) - 1


def _cards(text: str) -> list[str]:
    return [text[k : k + 2] for k in range(0, len(text), 2)]


def deck_for(phh: PhhHand) -> list[str]:
    """A deck that deals, in our order, the hole and board cards the file records."""
    count = len(phh.starting_stacks)
    placed: dict[int, str] = {}
    hole: list[list[str]] = [[_UNKNOWN, _UNKNOWN] for _ in range(count)]
    board: list[str] = []
    for action in phh.actions:
        words = _words(action)
        if words[:2] == ["d", "dh"] and len(words) == 4:
            hole[_player(words[2], count)] = _cards(words[3])[:2]
        elif words[:2] == ["d", "db"] and len(words) == 3:
            board += _cards(words[2])
        elif len(words) == 3 and words[1] == "sm" and words[2] != "-":
            player = _player(words[0], count)
            hole[player] = [
                shown if known == _UNKNOWN else known
                for known, shown in zip(hole[player], _cards(words[2]), strict=False)
            ]
    for player, cards in enumerate(hole):
        for k, card in enumerate(cards):
            if is_card(card):
                placed[hole_card_index(player, k, count)] = card
    positions = [p for street in (1, 2, 3) for p in board_indices(street, count)]
    for position, card in zip(positions, board, strict=False):
        if is_card(card):
            placed[position] = card
    if len(set(placed.values())) != len(placed):
        raise ValueError("a card appears twice")
    spare = iter(card for card in ALL_CARDS if card not in set(placed.values()))
    return [placed[k] if k in placed else next(spare) for k in range(len(ALL_CARDS))]


def _reversed_if_heads_up(values: Sequence[int]) -> list[int]:
    return list(values)[::-1] if len(values) == 2 else list(values)


def replay_phh(phh: PhhHand) -> Hand:
    """Play a NLHE hand history through the engine; raises PhhReplayError on a refused action."""
    if phh.variant != "NT":
        raise DomainError(ErrorCode.VALIDATION_ERROR, f"variant {phh.variant!r} is not NLHE")
    count = len(phh.starting_stacks)
    try:
        deck = deck_for(phh)
    except ValueError as exc:
        raise PhhReplayError(-1, "", f"cards: {exc}") from None
    try:
        hand = Hand.start(
            seats=list(range(count)),
            stacks=phh.starting_stacks,
            blinds=_reversed_if_heads_up(phh.blinds_or_straddles),
            antes=_reversed_if_heads_up(phh.antes),
            min_bet=phh.min_bet,
            deck=deck,
            dead_antes=not phh.ante_trimming_status,
        )
    except DomainError as exc:
        raise PhhReplayError(-1, "", exc.message) from None
    for index, action in enumerate(phh.actions):
        words = _words(action)
        if not words or words[0] == "d" or (len(words) >= 2 and words[1] == "sm"):
            continue  # dealing is ours (checked by the deck above); showdowns are automatic
        try:
            player = _player(words[0], count)
            match words[1:]:
                case ["f"]:
                    # A fold where a check is free is the table's (a second timeout in a
                    # row, seed 004); PHH and pokerkit take it, and our exports carry it.
                    hand.fold_out(player)
                case ["cc"]:
                    facing = hand.bets[player] < max(hand.bets)
                    hand.act(player, ActionKind.CALL if facing else ActionKind.CHECK)
                case ["cbr", amount]:
                    hand.act(player, ActionKind.RAISE, int(amount))
                case _:
                    raise ValueError("not a NLHE action")
        except DomainError as exc:
            raise PhhReplayError(index, action, f"{exc.code}: {exc.message}") from None
        except (ValueError, IndexError) as exc:
            raise PhhReplayError(index, action, str(exc)) from None
    if not hand.over:
        raise PhhReplayError(len(phh.actions), "", "the hand history ends before the hand does")
    return hand


def _quote(text: str) -> str:
    """A TOML basic string (security review N7: a literal string escapes nothing, so a name
    with ``'`` broke the file and a chosen one could rewrite the players array).

    JSON's escapes are TOML's for quotes, backslashes and control characters; DEL is a control
    character TOML refuses raw and JSON leaves alone; other characters stay as they are, so no
    surrogate escapes (which TOML refuses) are ever written.
    """
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_list(values: Sequence[object]) -> str:
    return "[" + ", ".join(_quote(v) if isinstance(v, str) else str(v) for v in values) + "]"


_BOARD_SIZE = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}


def _deal_board_to(size: int, board: Sequence[str], dealt: int, actions: list[str]) -> int:
    while dealt < min(size, len(board)):
        end = 3 if dealt == 0 else dealt + 1
        actions.append("d db " + "".join(board[dealt:end]))
        dealt = end
    return dealt


def to_phh(record: dict[str, Any], names: dict[int, str] | None = None) -> str:
    """A hand record (``domain.holdem.hand_record``) as PHH text, seats named by ``names``."""
    seats: list[int] = record["seats"]
    label = {seat: f"p{i + 1}" for i, seat in enumerate(seats)}
    blinds = _reversed_if_heads_up([record["blinds"].get(str(s), 0) for s in seats])
    antes = _reversed_if_heads_up([record["antes"].get(str(s), 0) for s in seats])
    # A hand this reader may not see is dealt as unknown cards (PHH's ``????``).
    hole = record["hole_cards"]
    actions = [f"d dh {label[s]} {''.join(hole.get(str(s)) or ['??', '??'])}" for s in seats]
    board: list[str] = record["board"]
    dealt = 0
    for entry in record["actions"]:
        dealt = _deal_board_to(_BOARD_SIZE[entry["street"]], board, dealt, actions)
        who, kind = label[entry["seat"]], entry["action"]
        if kind == "fold":
            actions.append(f"{who} f")
        elif kind in ("check", "call"):
            actions.append(f"{who} cc")
        else:
            actions.append(f"{who} cbr {entry['amount']}")
    for seat in record["showdown_order"]:
        shown = record["shown"].get(str(seat))
        cards = " " + "".join(shown["cards"]) if shown else ""
        actions.append(f"{label[seat]} sm{cards}")
    _deal_board_to(5, board, dealt, actions)
    named = names or {}
    players = [named.get(seat, f"Seat {seat}") for seat in seats]
    lines = [
        "variant = 'NT'",
        f"ante_trimming_status = {'false' if record['dead_antes'] else 'true'}",
        f"antes = {_toml_list(antes)}",
        f"blinds_or_straddles = {_toml_list(blinds)}",
        f"min_bet = {record['min_bet']}",
        f"starting_stacks = {_toml_list([record['stacks_before'][str(s)] for s in seats])}",
        f"actions = {_toml_list(actions)}",
        f"players = {_toml_list(players)}",
        f"finishing_stacks = {_toml_list([record['stacks_after'][str(s)] for s in seats])}",
    ]
    return "\n".join(lines) + "\n"
