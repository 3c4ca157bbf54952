"""Cash-room rules: the operator's room is validated field by field, a hand's settlement
conserves chips on any hand the engine plays, and the stream tells each action once."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import deck as decks
from domain.errors import DomainError, ErrorCode
from domain.holdem import ButtonPositions, hand_record, public_view, start_hand
from domain.rooms import StreamCursor, hand_events, settle, validate_room

ROOM: dict[str, Any] = {
    "name": "Main",
    "entry": {"amount": 1000, "currency": "virtual_chips"},
    "stakes": {"smallBlind": 5, "bigBlind": 10},
    "seats": 6,
    "speed": "turbo",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "  "}, "name"),
        ({"name": "a\x00b"}, "name"),
        ({"entry": {"amount": 0}}, "entry.amount"),
        ({"entry": {"amount": "1000"}}, "entry.amount"),
        ({"entry": {"amount": 1000, "currency": "usdc"}}, "entry.currency"),
        ({"entry": 1000}, "entry"),
        ({"stakes": {"smallBlind": 10, "bigBlind": 5}}, "stakes.bigBlind"),
        ({"stakes": {"smallBlind": True, "bigBlind": 5}}, "stakes.smallBlind"),
        ({"seats": 1}, "seats"),
        ({"seats": 10}, "seats"),
        ({"speed": "ludicrous"}, "speed"),
        ({"entry": {"amount": 9}}, "entry.amount"),
        ({"kind": "agent_only"}, "kind"),
        ({"kind": None}, "kind"),
    ],
)
def test_bad_rooms_are_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(DomainError) as err:
        validate_room({**ROOM, **change})
    assert err.value.code is ErrorCode.INVALID_SETTINGS and err.value.field == field


@pytest.mark.parametrize(
    ("speed", "timeouts"), [("turbo", (10, 30)), ("normal", (30, 60)), ("slow", (120, 300))]
)
def test_speeds_are_the_seeds_timeouts(speed: str, timeouts: tuple[int, int]) -> None:
    rules = validate_room({**ROOM, "speed": speed})
    assert (rules.decision_timeout, rules.disconnect_grace) == timeouts


@pytest.mark.parametrize("kind", ["open", "human_only", "agent", "copilot"])
def test_a_rooms_audience_is_one_of_the_tournaments_four(kind: str) -> None:
    assert validate_room({**ROOM, "kind": kind}).kind.value == kind
    assert validate_room(ROOM).kind.value == "open"


def play_random_hand(rng: random.Random, stacks: dict[int, int]) -> Any:
    seats = sorted(stacks)
    hand = start_hand(
        seat_count=9,
        positions=ButtonPositions(seats[0], seats[1 % len(seats)], seats[2 % len(seats)])
        if len(seats) > 2
        else ButtonPositions(seats[0], seats[0], seats[1]),
        stacks=stacks,
        small_blind=5,
        big_blind=10,
        deck=decks.shuffled_deck(rng.randbytes(32)),
    )
    cursor, told = StreamCursor(), []
    while not hand.over:
        events, cursor = hand_events(1, public_view(hand, None), cursor)
        told += events
        legal = hand.legal_actions()
        assert legal is not None and hand.actor_seat is not None
        kind = rng.choice(list(legal.to_dict()["actions"]))
        amount = None
        if kind == "raise":
            info = legal.to_dict()
            amount = rng.randint(info["min_raise_to"], info["max_raise_to"])
        hand.act(hand.actor_seat, kind, amount)
    events, cursor = hand_events(1, public_view(hand, None), cursor)
    told += events
    return hand, told


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    stacks=st.lists(st.integers(1, 3000), min_size=2, max_size=9),
)
def test_settlement_conserves_chips_and_the_stream_tells_each_action_once(
    seed: int, stacks: list[int]
) -> None:
    rng = random.Random(seed)
    hand, told = play_random_hand(rng, dict(enumerate(stacks)))
    record = hand_record(hand)
    result = settle(record)
    assert sum(result.deltas.values()) == 0
    assert result.gross_pot == sum(result.net_to_winner.values())
    assert result.gross_pot == sum(hand.committed)
    for seat, delta in result.deltas.items():
        assert record["stacks_after"][str(seat)] - record["stacks_before"][str(seat)] == delta
    keys = [key for _, key, _ in told]
    assert len(keys) == len(set(keys))
    assert [p for t, _, p in told if t == "action"] == [
        {
            "handNumber": 1,
            "seat": a["seat"],
            "street": a["street"],
            "action": a["action"],
            "amount": a["amount"],
            "allIn": a["all_in"],
        }
        for a in record["actions"]
    ]
    streets = [p["street"] for t, _, p in told if t == "community_cards"]
    assert streets == ["flop", "turn", "river"][: len(streets)]
    assert [c for t, _, p in told if t == "community_cards" for c in p["cards"]] == record["board"]
    for _, _, payload in told:
        assert "hole_cards" not in payload


def test_an_action_the_table_took_says_so_in_the_stream() -> None:
    view = {
        "actions": [
            {
                "street": "preflop",
                "seat": 0,
                "action": "fold",
                "amount": None,
                "all_in": False,
                "auto": "timeout",
            },
            {"street": "preflop", "seat": 1, "action": "check", "amount": None, "all_in": False},
        ],
        "board": [],
        "pot": 0,
        "over": False,
        "pots": None,
        "players": [],
    }
    events, _ = hand_events(3, view, StreamCursor())
    actions = [payload for type_, _, payload in events if type_ == "action"]
    assert actions[0]["auto"] == "timeout" and "auto" not in actions[1]
