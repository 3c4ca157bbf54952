"""Built-in bots that play only through the HTTP client: random, tight-aggressive, equity.

Each policy maps the caller's game state to one legal action; :func:`run_bot` polls the state
(long-polling on its version) and answers whenever it is the bot's turn.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import eval7

from sdk.client import SngClient, SngError

Policy = Callable[[dict[str, Any], random.Random], tuple[str, int | None]]
FINAL_STATES = {"ended", "settling", "closed", "cancelled"}
RANKS = "23456789TJQKA"


def _my_cards(state: dict[str, Any]) -> list[str]:
    hand = state.get("hand") or {}
    for p in hand.get("players", []):
        if p.get("holeCards"):
            return list(p["holeCards"])
    return []


def _raise_to(legal: dict[str, Any], fraction_of_pot: float, state: dict[str, Any]) -> int:
    pot = (state.get("hand") or {}).get("pot", 0)
    lo, hi = legal["minRaiseTo"], legal["maxRaiseTo"]
    return int(max(lo, min(hi, lo + fraction_of_pot * pot)))


def random_bot(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Any legal action, raises sized at random: chaos, for tests and demos."""
    legal = state["legalActions"]
    action = rng.choice(legal["actions"])
    if action == "raise":
        return action, rng.randint(legal["minRaiseTo"], legal["maxRaiseTo"])
    return action, None


def _preflop_score(cards: list[str]) -> float:
    """Chen-like score in [0, 1]: pairs, high cards, suited and connected hands score high."""
    (r1, s1), (r2, s2) = (cards[0][0], cards[0][1]), (cards[1][0], cards[1][1])
    hi, lo = sorted((RANKS.index(r1), RANKS.index(r2)), reverse=True)
    score = hi / 12 * 0.5 + lo / 12 * 0.2
    if hi == lo:
        score += 0.35 + hi / 12 * 0.15
    if s1 == s2:
        score += 0.06
    if 0 < hi - lo <= 2:
        score += 0.04
    return min(score, 1.0)


def equity(
    cards: list[str], board: list[str], opponents: int, rng: random.Random, *, trials: int = 200
) -> float:
    """Monte Carlo share of the pot against random hands, with eval7's evaluator."""
    mine = [eval7.Card(c) for c in cards]
    known = [eval7.Card(c) for c in board]
    deck = [c for c in eval7.Deck().cards if c not in mine and c not in known]
    won = 0.0
    for _ in range(trials):
        draw = rng.sample(deck, 2 * opponents + 5 - len(known))
        runout = known + draw[: 5 - len(known)]
        best = eval7.evaluate(mine + runout)
        others = [
            eval7.evaluate(draw[5 - len(known) + 2 * i : 7 - len(known) + 2 * i] + runout)
            for i in range(opponents)
        ]
        top = max(others) if others else -1
        if best > top:
            won += 1
        elif best == top:
            won += 1 / (1 + others.count(top))
    return won / trials


def _opponents(state: dict[str, Any]) -> int:
    hand = state.get("hand") or {}
    live = [p for p in hand.get("players", []) if not p.get("folded")]
    return max(1, len(live) - 1)


def tight_aggressive(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Plays few hands and bets them hard: raise strong, call fair, fold the rest."""
    legal = state["legalActions"]
    actions = legal["actions"]
    cards = _my_cards(state)
    board = (state.get("hand") or {}).get("board", [])
    strength = (
        _preflop_score(cards)
        if not board
        else equity(cards, board, _opponents(state), rng, trials=80)
    )
    if strength > 0.7 and "raise" in actions:
        return "raise", _raise_to(legal, 0.75, state)
    if strength > 0.7 and "all_in" in actions:
        return "all_in", None
    if strength > 0.45 or legal["toCall"] == 0:
        return ("check", None) if "check" in actions else ("call", None)
    return ("check", None) if "check" in actions else ("fold", None)


def equity_bot(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Calls when its Monte Carlo equity beats the pot odds, raises when well ahead."""
    legal = state["legalActions"]
    actions = legal["actions"]
    hand = state.get("hand") or {}
    win = equity(_my_cards(state), hand.get("board", []), _opponents(state), rng)
    to_call = legal["toCall"]
    pot_odds = to_call / (hand.get("pot", 0) + to_call) if to_call else 0.0
    if win > 0.65 and "raise" in actions:
        return "raise", _raise_to(legal, 1.0, state)
    if win >= pot_odds:
        return ("check", None) if "check" in actions else ("call", None)
    return ("check", None) if "check" in actions else ("fold", None)


POLICIES: dict[str, Policy] = {
    "random": random_bot,
    "tag": tight_aggressive,
    "equity": equity_bot,
}


RETRIED = {"stale_turn", "not_your_turn", "player_in_transit", "table_moved", "unknown_seat"}
"""An action refused for one of these is answered by reading the state again: the turn moved
on, or a multi-table tournament moved the bot (docs/mtt.md)."""


async def _play(
    fetch: Callable[[int | None], Awaitable[dict[str, Any]]],
    act: Callable[[dict[str, Any], str, int | None], Awaitable[Any]],
    done: Callable[[dict[str, Any]], Awaitable[bool]],
    policy: Policy,
    rng: random.Random,
    sit_in: Callable[[], Awaitable[Any]],
    seed: Callable[[dict[str, Any]], Awaitable[bool]],
) -> None:
    """Long-poll the state and answer every turn of ours until ``done(state)``; come back
    at once if the table sat us out (a slow turn, a lost connection). Every next hand gets
    our seed (docs/fairness.md) as soon as its deck is committed."""
    version: int | None = None
    while True:
        try:
            state = await fetch(version)
        except SngError as err:
            if err.status >= 500:
                await asyncio.sleep(0.5)
                continue
            raise
        version = state["version"]
        if await done(state):
            return
        await seed(state)
        if (state.get("you") or {}).get("status") == "sitting_out":
            try:
                await sit_in()
            except SngError as err:
                # Already back (a race with our own action), or a multi-table tournament is
                # moving us (the next state says where we sit).
                if err.code not in {"invalid_state", "player_in_transit", "unknown_seat"}:
                    raise
            continue
        if not state.get("legalActions"):
            continue
        action, amount = policy(state, rng)
        try:
            await act(state, action, amount)
        except SngError as err:
            if err.code not in RETRIED:
                raise


async def run_bot(
    client: SngClient,
    tournament_id: str,
    policy: Policy,
    *,
    seed: int = 0,
    until_eliminated: bool = False,
) -> None:
    """Play until the tournament is over; with ``until_eliminated``, also until this entry
    is out (``you.status`` ``eliminated``, once it was seen in play: a re-entry's first state
    may still show the entry before it), so the caller can enter again."""
    playing = False

    async def over(state: dict[str, Any]) -> bool:
        nonlocal playing
        if state.get("tournament", {}).get("state") in FINAL_STATES:
            return True
        status = (state.get("you") or {}).get("status")
        if status == "eliminated":
            return until_eliminated and playing
        playing = playing or status is not None
        return False

    await _play(
        lambda v: client.game_state(tournament_id, wait_for_change=v, wait_seconds=10),
        lambda st, action, amount: client.act(
            tournament_id,
            hand_number=st["handNumber"],
            turn=st["turn"],
            action=action,
            amount=amount,
            table_id=st.get("tableId"),
        ),
        over,
        policy,
        random.Random(seed),
        lambda: client.sit_in(tournament_id),
        lambda st: client.seed(tournament_id, st),
    )


async def run_room_bot(
    client: SngClient, room_id: str, policy: Policy, *, hands: int, seed: int = 0
) -> None:
    """Sit at a cash room (joining if needed) and play ``hands`` more hands, then leave; leaves
    early when the others have gone, and stops if the room closes or the bot is unseated."""
    await client.join_room(room_id)
    first: int | None = None

    async def done(state: dict[str, Any]) -> bool:
        nonlocal first
        # Unseated: no seat of ours in the game state (``you`` names it; the join's answer
        # numbers seats from 1, the game state's seats are the table's indices).
        unseated = (state.get("you") or {}).get("seat") is None
        if state["room"]["status"] == "closed" or unseated:
            return True
        first = state["handNumber"] if first is None else first
        alone = state["room"]["status"] == "paused" and len(state["seats"]) == 1
        if state["handNumber"] >= first + hands or alone:
            await client.leave_room(room_id)
            return True
        return False

    await _play(
        lambda v: client.room_state(room_id, wait_for_change=v, wait_seconds=10),
        lambda st, action, amount: client.room_act(
            room_id, hand_number=st["handNumber"], turn=st["turn"], action=action, amount=amount
        ),
        done,
        policy,
        random.Random(seed),
        lambda: client.room_sit_in(room_id),
        lambda st: client.room_seed(room_id, st),
    )
