"""The bundled CoPilot advisor's policy (sdk/advisor.py): push or fold at a low M, tighter
near a pay jump, a short reason, and always an advice the server accepts (a legal action, a
raise within range, a reason of at most 280 characters)."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest
from nacl.public import PrivateKey, SealedBox

from sdk.advisor import advise, hand_label, opened, push_threshold
from sdk.client import new_card_key

RANKS = "23456789TJQKA"
SUITS = "cdhs"


def state(
    cards: list[str] | None,
    *,
    m: float,
    jump: int = 0,
    icm: float = 500.0,
    actions: tuple[str, ...] = ("fold", "call", "raise", "all_in"),
    to_call: int = 20,
    board: tuple[str, ...] = (),
    stack: int = 400,
) -> dict[str, Any]:
    return {
        "legalActions": {
            "seat": 0,
            "actions": list(actions),
            "toCall": to_call,
            "minRaiseTo": 40 if "raise" in actions else None,
            "maxRaiseTo": stack if "raise" in actions else None,
        },
        "tournamentMyView": {
            "rank": 2,
            "stackInBigBlinds": stack / 20,
            "mRatio": m,
            "payJumpToNext": jump,
            "icmEquity": icm,
        },
        "hand": {
            "board": list(board),
            "pot": 30,
            "players": [
                {"seat": 0, "holeCards": cards, "folded": False},
                {"seat": 1, "holeCards": None, "folded": False},
            ],
        },
        "you": {"stack": stack, "toAct": True},
    }


def test_a_short_stack_is_told_to_push_a_good_hand_with_the_m_in_the_reason() -> None:
    advice = advise(state(["Ah", "Kd"], m=4.2))
    assert (advice.action, advice.amount) == ("all_in", None)
    assert advice.reason == "M 4.2: push or fold; AKo is a push"


def test_a_short_stack_folds_a_bad_hand_and_checks_when_it_is_free() -> None:
    assert advise(state(["7h", "2d"], m=3.0)).action == "fold"
    free = advise(state(["7h", "2d"], m=3.0, actions=("check", "raise", "all_in"), to_call=0))
    assert free.action == "check" and free.reason == "M 3.0: push or fold; 72o is a fold"


def test_a_pay_jump_tightens_the_push_range() -> None:
    # QJo is a push at M 4 ...
    assert advise(state(["Qh", "Jd"], m=4.0)).action == "all_in"
    # ... and a fold when moving up a place is worth most of what the stack already is.
    near = advise(state(["Qh", "Jd"], m=4.0, jump=400, icm=500.0))
    assert near.action == "fold"
    assert "pay jump" in near.reason
    assert push_threshold(4.0, 0.8) > push_threshold(4.0, 0.0)


def test_the_lower_the_m_the_wider_the_push_range() -> None:
    assert push_threshold(1.0, 0.0) < push_threshold(3.0, 0.0) < push_threshold(4.9, 0.0)
    # K8o: a push when almost blinded out, a fold with a few orbits left.
    assert advise(state(["Kh", "8d"], m=1.0)).action == "all_in"
    assert advise(state(["Kh", "8d"], m=4.9)).action == "fold"


def test_a_deep_stack_raises_premium_hands_and_folds_trash_to_a_bet() -> None:
    aces = advise(state(["Ah", "Ad"], m=30.0))
    assert (aces.action, aces.amount) == ("raise", 40)
    assert aces.reason.startswith("M 30.0: AA is a raise")
    assert advise(state(["7h", "2d"], m=30.0, to_call=200)).action == "fold"


def test_after_the_flop_it_weighs_equity() -> None:
    top_set = advise(state(["Ah", "Ad"], m=30.0, board=("As", "7c", "2d")), random.Random(1))
    assert top_set.action == "raise" and "equity" in top_set.reason
    air = advise(state(["7h", "2d"], m=30.0, board=("As", "Kc", "Qd"), to_call=300))
    assert air.action == "fold"


def test_unreadable_cards_are_no_risk() -> None:
    advice = advise(state(None, m=8.0))
    assert advice.action == "fold" and "not readable" in advice.reason


def test_hand_labels() -> None:
    assert [hand_label(c) for c in (["Ah", "Kh"], ["2c", "Ts"], ["9d", "9s"])] == [
        "AKs",
        "T2o",
        "99",
    ]


@pytest.mark.parametrize("seed", range(4))
def test_every_advice_is_one_the_server_accepts(seed: int) -> None:
    rng = random.Random(seed)
    deck = [r + s for r in RANKS for s in SUITS]
    menus = [
        ("fold", "call", "raise", "all_in"),
        ("check", "raise", "all_in"),
        ("fold", "call", "all_in"),
        ("fold", "all_in"),
        ("check", "all_in"),
    ]
    for _ in range(60):
        cards = rng.sample(deck, 5)
        menu = rng.choice(menus)
        board = tuple(cards[2 : 2 + rng.choice((0, 3))])
        st = state(
            cards[:2],
            m=rng.uniform(0.5, 40),
            jump=rng.choice((0, 100, 400)),
            icm=rng.uniform(50, 1000),
            actions=menu,
            to_call=0 if "check" in menu else rng.randint(10, 400),
            board=board,
        )
        advice = advise(st, rng)
        legal = st["legalActions"]
        assert advice.action in legal["actions"], (menu, advice)
        if advice.action == "raise":
            assert legal["minRaiseTo"] <= (advice.amount or 0) <= legal["maxRaiseTo"]
        else:
            assert advice.amount is None
        assert 0 < len(advice.reason) <= 280


def test_in_a_cash_room_the_m_comes_from_the_stakes() -> None:
    room = state(["Kh", "8d"], m=0.0, to_call=400)
    del room["tournamentMyView"]
    room["stakes"] = {"smallBlind": 5, "bigBlind": 10, "ante": 0}
    room["you"]["stack"] = 30  # M 2: blinded out soon, K8o is a push
    advice = advise(room)
    assert advice.action == "all_in" and advice.reason.startswith("M 2.0: push or fold")
    room["you"]["stack"] = 3000  # M 200: a deep stack folds K8o to a big bet
    assert advise(room).action == "fold"


def test_cards_sealed_to_the_advisors_card_key_are_opened_before_advising() -> None:
    key = new_card_key()
    public = PrivateKey(key).public_key
    sealed = state(None, m=4.2)
    sealed["hand"]["players"][0]["sealedHoleCards"] = base64.b64encode(
        SealedBox(public).encrypt(json.dumps(["Ah", "Kd"]).encode())
    ).decode()
    assert advise(opened(sealed, key)).reason == "M 4.2: push or fold; AKo is a push"


def test_hand_for_hand_tightens_the_push_range_when_a_large_fields_icm_is_an_estimate() -> None:
    """A large MTT field's ``icmEquity`` is chip equity (``mtt.icmExact`` false): the pay-jump
    ratio cannot be trusted there, so hand-for-hand says the bubble; with exact ICM the
    ratio decides, as before."""
    bubble = {**state(["Qh", "Jd"], m=4.0), "mtt": {"icmExact": False, "handForHand": True}}
    assert advise(bubble).action == "fold" and "pay jump" in advise(bubble).reason
    exact = {**state(["Qh", "Jd"], m=4.0), "mtt": {"icmExact": True, "handForHand": True}}
    assert advise(exact).action == "all_in"
