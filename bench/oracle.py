"""pokerkit as the oracle: play the same deck and the same actions through both engines.

The differential harness the domain tests (tests/domain) and the engine bench (bench/engine.py)
share; it lives here, not under tests/, so the installed bench needs no test code. Random
choices come from a caller-provided
``random.Random`` so every run is reproducible; nothing here is domain code.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass
from functools import lru_cache

from pokerkit import Automation, Mode, NoLimitTexasHoldem, StandardHighHand, State

from domain.holdem import ALL_CARDS, ActionKind, Hand
from domain.holdem.cards import board_indices

# pokerkit re-evaluates the same (hole, board) many times per showdown (hand killing asks
# "can this hand still win?" for every pot); its evaluator is a pure function of the cards, so
# memoising it changes no answer and makes the 10,000-hand differential test fit in its budget.
_evaluate = lru_cache(maxsize=8192)(StandardHighHand.from_game)


def _memoised_from_game(cls, hole_cards, board_cards):  # type: ignore[no-untyped-def]
    return _evaluate(tuple(hole_cards), tuple(board_cards))


StandardHighHand.from_game = classmethod(_memoised_from_game)  # type: ignore[method-assign,assignment]

AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


@dataclass(frozen=True)
class Spec:
    """One random hand: per-player lists in our index order (0 = left of the button)."""

    stacks: list[int]
    blinds: list[int]
    antes: list[int]
    min_bet: int
    dead_antes: bool
    deck: list[str]


def random_spec(rng: random.Random, players: int | None = None) -> Spec:
    count = players or rng.randint(2, 10)
    big = rng.choice([2, 10, 40, 100, 1000])
    small = rng.choice([big // 2, big // 2, max(1, big // 4), big])
    ante_mode = rng.choice(["none", "none", "every", "big_blind"])
    ante = rng.randint(1, big) if ante_mode != "none" else 0
    stacks = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.15:
            stacks.append(rng.randint(1, big + ante + 1))  # all-in on the forced bets
        elif kind < 0.45:
            stacks.append(rng.randint(big, 12 * big))  # short
        else:
            stacks.append(rng.randint(20 * big, 300 * big))
    big_blind_index = 0 if count == 2 else 1
    small_blind_index = 1 if count == 2 else 0
    blinds = [0] * count
    blinds[big_blind_index], blinds[small_blind_index] = big, small
    if ante_mode == "every":
        antes = [ante] * count
    elif ante_mode == "big_blind":
        antes = [0] * count
        antes[big_blind_index] = ante
    else:
        antes = [0] * count
    deck = list(ALL_CARDS)
    rng.shuffle(deck)
    return Spec(stacks, blinds, antes, big, ante_mode == "big_blind", deck)


def start_ours(spec: Spec) -> Hand:
    return Hand.start(
        seats=list(range(len(spec.stacks))),
        stacks=spec.stacks,
        blinds=spec.blinds,
        antes=spec.antes,
        min_bet=spec.min_bet,
        deck=spec.deck,
        dead_antes=spec.dead_antes,
    )


def _pokerkit_order(values: list[int]) -> list[int]:
    # pokerkit takes heads-up blinds/antes small-blind first and gives them to p2, p1.
    return values[::-1] if len(values) == 2 else values


def start_pokerkit(spec: Spec) -> State:
    count = len(spec.stacks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = NoLimitTexasHoldem.create_state(
            AUTOMATIONS,
            not spec.dead_antes,
            _pokerkit_order(spec.antes),
            _pokerkit_order(spec.blinds),
            spec.min_bet,
            spec.stacks,
            count,
            mode=Mode.TOURNAMENT,
        )
        for player in range(count):
            state.deal_hole(spec.deck[player] + spec.deck[count + player], player)
    return state


def advance_pokerkit(state: State, spec: Spec) -> None:
    """Do the dealer's work (burn, board, showdown) until a player must act or the hand ends."""
    count = len(spec.stacks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while state.status:
            if state.can_burn_card():
                street = state.street_index or 0
                state.burn_card(spec.deck[board_indices(street, count)[0] - 1])
            elif state.can_deal_board():
                street = state.street_index or 0
                state.deal_board("".join(spec.deck[k] for k in board_indices(street, count)))
            elif state.can_show_or_muck_hole_cards():
                state.show_or_muck_hole_cards(True)
            else:
                break


def choose(rng: random.Random, hand: Hand) -> tuple[ActionKind, int | None]:
    legal = hand.legal_actions()
    assert legal is not None
    weights = {
        ActionKind.FOLD: 2,
        ActionKind.CHECK: 5,
        ActionKind.CALL: 5,
        ActionKind.RAISE: 3,
        ActionKind.ALL_IN: 1,
    }
    kinds = list(legal.actions)
    kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
    if kind is ActionKind.RAISE:
        assert legal.min_raise_to is not None and legal.max_raise_to is not None
        low, high = legal.min_raise_to, legal.max_raise_to
        return kind, rng.choice([low, high, rng.randint(low, high), rng.randint(low, high)])
    return kind, None


def apply_pokerkit(state: State, entry: dict[str, object]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if entry["action"] == "fold":
            state.fold()
        elif entry["action"] in ("check", "call"):
            state.check_or_call()
        else:
            amount = entry["amount"]
            assert isinstance(amount, int)
            state.complete_bet_or_raise_to(amount)
