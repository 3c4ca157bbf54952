"""Rules of the hand engine one by one, plus serialisation and what each viewer may see."""

from __future__ import annotations

import json
import random

import pytest

from bench.oracle import choose, random_spec, start_ours
from domain.errors import DomainError, ErrorCode
from domain.holdem import (
    ALL_CARDS,
    ActionKind,
    ButtonPositions,
    Hand,
    actor_legal,
    hand_record,
    private_parts,
    public_view,
    start_hand,
    viewer_view,
)

DECK = list(ALL_CARDS)


def _hand(stacks: list[int], blinds: list[int] | None = None, **kwargs: object) -> Hand:
    blinds = blinds or [1, 2] + [0] * (len(stacks) - 2)
    return Hand.start(
        seats=list(range(len(stacks))),
        stacks=stacks,
        blinds=blinds,
        antes=kwargs.pop("antes", [0] * len(stacks)),  # type: ignore[arg-type]
        min_bet=2,
        deck=DECK,
        **kwargs,  # type: ignore[arg-type]
    )


def test_heads_up_button_posts_small_blind_and_acts_first_preflop_last_after() -> None:
    hand = start_hand(
        seat_count=6,
        positions=ButtonPositions(4, 4, 1),
        stacks={1: 100, 4: 100},
        small_blind=1,
        big_blind=2,
        deck=DECK,
    )
    assert hand.seats == [1, 4] and hand.posted_blinds == [2, 1]
    assert hand.actor_seat == 4
    hand.act(4, "call")
    hand.act(1, "check")
    assert hand.street == 1 and hand.actor_seat == 1


def test_dead_small_blind_big_blind_acts_first_after_the_flop() -> None:
    hand = start_hand(
        seat_count=5,
        positions=ButtonPositions(1, 2, 3),
        stacks={0: 100, 3: 100, 4: 100},
        small_blind=1,
        big_blind=2,
        deck=DECK,
    )
    assert hand.seats == [3, 4, 0] and hand.posted_blinds == [2, 0, 0]
    assert hand.actor_seat == 4
    hand.act(4, "call")
    hand.act(0, "call")
    hand.act(3, "check")
    assert hand.actor_seat == 3


def test_short_big_blind_posts_the_blind_before_the_big_blind_ante() -> None:
    hand = start_hand(
        seat_count=3,
        positions=ButtonPositions(0, 1, 2),
        stacks={0: 100, 1: 100, 2: 30},
        small_blind=10,
        big_blind=20,
        ante=20,
        ante_mode="big_blind",
        deck=DECK,
    )
    big = hand.seats.index(2)
    assert (hand.posted_blinds[big], hand.posted_antes[big], hand.stacks[big]) == (20, 10, 0)


def test_min_raise_and_short_all_in_does_not_reopen_betting() -> None:
    hand = _hand([1000, 1000, 130, 1000])  # blinds 1/2 at players 0 and 1
    legal = hand.legal_actions()
    assert legal is not None and (legal.to_call, legal.min_raise_to) == (2, 4)
    hand.act(2, "raise", 100)  # player 2: raise to 100 (a raise of 98)
    legal = hand.legal_actions()
    assert legal is not None and legal.min_raise_to == 198
    with pytest.raises(DomainError) as refused:
        hand.act(3, "raise", 150)
    assert refused.value.code is ErrorCode.AMOUNT_OUT_OF_RANGE
    hand.act(3, "call")
    hand.act(0, "fold")
    hand.act(1, "fold")
    assert hand.street == 1
    hand.act(2, "all_in")  # 30 more
    assert not hand.can_act(3, "raise", 100)  # nobody left to raise against
    hand.act(3, "call")
    assert hand.over and len(hand.board) == 5


def test_short_all_in_raise_leaves_callers_only_calling() -> None:
    hand = _hand([1000, 1000, 1000, 150])
    hand.act(2, "raise", 100)
    hand.act(3, "all_in")  # to 150: 50 more, less than a full raise of 98
    hand.act(0, "fold")
    hand.act(1, "fold")
    legal = hand.legal_actions()
    assert legal is not None and legal.seat == 2
    assert ActionKind.RAISE not in legal.actions and legal.to_call == 50
    with pytest.raises(DomainError) as refused:
        hand.act(2, "raise", 400)
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION


def test_refusals_carry_codes() -> None:
    hand = _hand([100, 100, 100])
    with pytest.raises(DomainError) as wrong_turn:
        hand.act(0, "call")
    assert wrong_turn.value.code is ErrorCode.NOT_YOUR_TURN
    with pytest.raises(DomainError) as unknown:
        hand.act(7, "call")
    assert unknown.value.code is ErrorCode.UNKNOWN_SEAT
    with pytest.raises(DomainError) as illegal:
        hand.act(2, "check")
    assert illegal.value.code is ErrorCode.ILLEGAL_ACTION
    with pytest.raises(DomainError) as bogus:
        hand.act(2, "dance")
    assert bogus.value.code is ErrorCode.ILLEGAL_ACTION
    assert not hand.can_act(2, "raise", 1000) and hand.can_act(2, "raise", 100)


def test_odd_chip_goes_to_first_seat_left_of_the_button_pot_by_pot() -> None:
    # Board plays (royal flush) for everyone: all split. Antes of 1 make the pot odd.
    deck = ["2c", "3d", "4h", "2d", "3h", "4c", "5s", "As", "Ks", "Qs", "6d", "Js", "7d", "Ts"]
    deck += [card for card in ALL_CARDS if card not in deck]
    hand = Hand.start(
        seats=[0, 1, 2],
        stacks=[100, 100, 100],
        blinds=[1, 2, 0],
        antes=[1, 1, 1],
        min_bet=2,
        deck=deck,
    )
    hand.act(2, "call")
    hand.act(0, "fold")
    hand.act(1, "check")
    while not hand.over:
        hand.act(hand.actor_seat or 0, "check")
    assert hand.board == ["As", "Ks", "Qs", "Js", "Ts"]
    assert hand.stacks == [98, 101, 101] and sum(hand.stacks) == 300
    hand = Hand.start(
        seats=[0, 1, 2],
        stacks=[100, 100, 100],
        blinds=[1, 2, 0],
        antes=[0, 0, 0],
        min_bet=2,
        deck=deck,
    )
    hand.act(2, "call")
    hand.act(0, "fold")
    hand.act(1, "check")
    while not hand.over:
        hand.act(hand.actor_seat or 0, "check")
    assert hand.stacks == [99, 101, 100]  # pot of 5 split 3/2, the odd chip to player 1


def _play_random(seed: int) -> list[Hand]:
    rng = random.Random(seed)
    snapshots = []
    hand = start_ours(random_spec(rng))
    while not hand.over:
        snapshots.append(Hand.from_dict(json.loads(json.dumps(hand.to_dict()))))
        kind, amount = choose(rng, hand)
        hand.act(hand.actor_seat or 0, kind, amount)
    snapshots.append(hand)
    return snapshots


@pytest.mark.parametrize("seed", range(40))
def test_state_round_trips_through_json_at_every_step(seed: int) -> None:
    snapshots = _play_random(seed)
    final = snapshots[-1]
    for snapshot in snapshots:
        assert Hand.from_dict(snapshot.to_dict()) == snapshot
    # Resuming from any serialised snapshot with the same choices reaches the same end.
    rng = random.Random(seed)
    random_spec(rng)
    resumed = snapshots[0]
    while not resumed.over:
        kind, amount = choose(rng, resumed)
        resumed = Hand.from_dict(resumed.to_dict())
        resumed.act(resumed.actor_seat or 0, kind, amount)
    assert resumed.stacks == final.stacks and resumed.to_dict() == final.to_dict()


def test_view_shows_only_the_viewers_cards_until_showdown() -> None:
    hand = _hand([100, 100, 100])
    view = public_view(hand, viewer=1)
    cards = {p["seat"]: p["hole_cards"] for p in view["players"]}
    assert cards[1] == hand.hole[1] and cards[0] is None and cards[2] is None
    assert view["legal"] is None and view["actor"] == 2
    assert public_view(hand, viewer=2)["legal"]["min_raise_to"] == 4
    hand.act(2, "all_in")
    hand.act(0, "all_in")
    hand.act(1, "all_in")
    assert hand.over
    view = public_view(hand, viewer=None)
    assert all(p["hole_cards"] is not None for p in view["players"])  # all-in: all shown
    json.dumps(view)


@pytest.mark.parametrize("seed", range(30))
def test_a_seat_view_composed_from_public_and_private_parts_is_the_engines(seed: int) -> None:
    """The read store keeps the spectator's view and each seat's sealed cards apart; what it
    serves a seat must be exactly the engine's view for that seat while the hand runs, and
    after it only what was shown (the private parts are dropped)."""
    for hand in _play_random(seed):
        spectator = public_view(hand, None)
        private = private_parts(hand)
        for seat in hand.seats:
            composed = viewer_view(spectator, seat, private.get(seat), actor_legal(hand))
            if not hand.over:
                assert composed == public_view(hand, seat)
            else:
                assert private == {} and composed == spectator
        assert viewer_view(spectator, None, None, actor_legal(hand)) == spectator


def test_hand_record_lists_busts_with_pre_hand_stacks() -> None:
    hand = _hand([50, 100, 100])
    hand.act(2, "all_in")
    hand.act(0, "all_in")
    hand.act(1, "fold")
    record = hand_record(hand)
    json.dumps(record)
    assert sum(record["stacks_after"].values()) == 250
    busted = {entry["seat"]: entry["stack_before"] for entry in record["busted"]}
    assert all(record["stacks_after"][str(seat)] == 0 for seat in busted)
    assert set(busted) <= {0, 2} and record["board"] and record["shown"]
    assert record["pots"] and record["actions"][0]["action"] == "raise"
