"""Hand-evaluator shoot-out: 7-card evaluations per second for the candidate libraries.

Run: ``python bench/evaluators.py``. Libraries that are not installed are reported as such.
Every library evaluates the same random 7-card hands (seeded; this is a script, not domain code).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
CARDS = [r + s for r in RANKS for s in SUITS]
N = 20_000


def _hands() -> list[list[str]]:
    rng = random.Random(7)
    return [rng.sample(CARDS, 7) for _ in range(N)]


def _pokerkit() -> Callable[[list[str]], object]:
    from pokerkit import Card, StandardHighHand

    def evaluate(cards: list[str]) -> object:
        parsed = tuple(Card.parse("".join(cards)))
        return StandardHighHand.from_game(parsed[:2], parsed[2:])

    return evaluate


def _domain() -> Callable[[list[str]], object]:
    from domain.holdem.evaluate import hand_strength

    return lambda cards: hand_strength(cards[:2], cards[2:])


def _eval7() -> Callable[[list[str]], object]:
    import eval7

    table = {c: eval7.Card(c) for c in CARDS}
    return lambda cards: eval7.evaluate([table[c] for c in cards])


def _phevaluator() -> Callable[[list[str]], object]:
    from phevaluator import evaluate_cards

    return lambda cards: evaluate_cards(*cards)


def main() -> None:
    hands = _hands()
    print(f"{'evaluator':<28}{'evals/s':>12}{'µs/eval':>10}")
    for name, factory in [
        ("pokerkit StandardHighHand", _pokerkit),
        ("domain.holdem (eval7)", _domain),
        ("eval7", _eval7),
        ("phevaluator", _phevaluator),
    ]:
        try:
            evaluate = factory()
        except ImportError as exc:
            print(f"{name:<28}{'not installed':>12}  ({exc.name})")
            continue
        start = time.perf_counter()
        for cards in hands:
            evaluate(cards)
        elapsed = time.perf_counter() - start
        print(f"{name:<28}{N / elapsed:>12,.0f}{elapsed / N * 1e6:>10.1f}")


if __name__ == "__main__":
    main()
