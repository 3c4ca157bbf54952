"""Engine throughput: hands/s and µs per action, ours against pokerkit on the same hands.

Run: ``python -m bench.engine [hands]`` (or ``sng bench``, section 6). Hands are random 6-max
and 9-max deals with a seeded random player (this is a script, not domain code). Both engines
replay the same recorded action scripts from the same decks; dealing, showdown and payout are
included in both timings.
Note: bench/oracle.py memoises pokerkit's hand evaluator (a pure function), which only
makes pokerkit faster here.
"""

from __future__ import annotations

import random
import sys
import time

from bench.oracle import (
    Spec,
    advance_pokerkit,
    apply_pokerkit,
    choose,
    random_spec,
    start_ours,
    start_pokerkit,
)
from domain.holdem import Hand


def scripts(players: int, count: int) -> list[tuple[Spec, list[dict[str, object]]]]:
    rng = random.Random(players)
    out = []
    for _ in range(count):
        spec = random_spec(rng, players)
        hand = start_ours(spec)
        while not hand.over:
            kind, amount = choose(rng, hand)
            hand.act(hand.actor_seat or 0, kind, amount)
        out.append((spec, hand.actions))
    return out


def run_ours(work: list[tuple[Spec, list[dict[str, object]]]]) -> float:
    start = time.perf_counter()
    for spec, actions in work:
        hand: Hand = start_ours(spec)
        for entry in actions:
            hand.act(entry["seat"], entry["action"], entry["amount"] or None)  # type: ignore[arg-type]
    return time.perf_counter() - start


def run_pokerkit(work: list[tuple[Spec, list[dict[str, object]]]]) -> float:
    start = time.perf_counter()
    for spec, actions in work:
        state = start_pokerkit(spec)
        advance_pokerkit(state, spec)
        for entry in actions:
            apply_pokerkit(state, entry)
            advance_pokerkit(state, spec)
    return time.perf_counter() - start


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"{'table':<8}{'engine':<10}{'hands/s':>10}{'µs/action':>11}{'ratio':>8}")
    for players in (6, 9):
        work = scripts(players, count)
        actions = sum(len(a) for _, a in work)
        ours, theirs = run_ours(work), run_pokerkit(work)
        for name, elapsed in (("ours", ours), ("pokerkit", theirs)):
            ratio = f"{theirs / ours:>7.1f}x" if name == "ours" else f"{'1.0x':>8}"
            print(
                f"{players}-max{'':<3}{name:<10}{count / elapsed:>10,.0f}"
                f"{elapsed / actions * 1e6:>11.1f}{ratio}"
            )


if __name__ == "__main__":
    main()
