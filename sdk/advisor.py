"""The bundled CoPilot advisor (docs/copilot.md): a decision agent that advises one player.

It connects to ``/tournaments/{id}/advisor/ws`` with its agent key, and answers every
``advice_request`` with :func:`advise`, a pure function of the advised player's game state:

- **M-ratio** (``tournamentMyView.mRatio``, Harrington's orbits left): below 5 it is push or
  fold before the flop (all-in with a hand good enough for the M, fold the rest); between 5
  and 10 it raises strong hands and folds marginal ones to a raise; above that it plays a
  tight-aggressive game.
- **ICM and the pay jump** (``icmEquity``, ``payJumpToNext``): when moving up one place is
  worth a large share of what the player's chips are already worth, busting costs more than
  doubling up gains, so it asks for a stronger hand to commit (tighter near a pay jump). In
  a large multi-table field ``icmEquity`` is a chip-equity estimate (``mtt.icmExact`` false):
  there hand-for-hand (``mtt``) says the bubble.
- Its reason is one short sentence the player reads: ``"M 4.2: push or fold; AKo is a
  push"``.

Run it: ``python -m sdk.advisor --url http://127.0.0.1:8000 --key sk_… --tournament T`` (or
``--room R``; or ``sng advisor …``). In a cash room (no tournament view) M is the stack over
one orbit of the room's stakes. It never acts: the player decides.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import random
from dataclasses import dataclass
from typing import Any

from nacl.public import PrivateKey, SealedBox
from websockets.asyncio.client import connect

from sdk.bots import RANKS, _my_cards, _opponents, _preflop_score, equity

PUSH_FOLD_M = 5.0
"""Below this M the advice is push or fold before the flop."""
SHORT_M = 10.0
"""Below this M (and from ``PUSH_FOLD_M``) a raise is an all-in or nothing to call."""
BUBBLE_PRESSURE = 0.5
"""A pay jump worth at least this share of the player's ICM equity tightens the advice."""
TIGHTEN = 0.08
"""How much stronger a hand must be near a pay jump (on the 0..1 preflop score)."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    action: str
    amount: int | None
    reason: str


def hand_label(cards: list[str]) -> str:
    """The usual name of a starting hand.

    >>> hand_label(["Ah", "Kd"]), hand_label(["9s", "Ts"]), hand_label(["7c", "7d"])
    ('AKo', 'T9s', '77')
    """
    (r1, s1), (r2, s2) = (cards[0][0], cards[0][1]), (cards[1][0], cards[1][1])
    hi, lo = sorted((r1, r2), key=RANKS.index, reverse=True)
    if hi == lo:
        return hi + lo
    return hi + lo + ("s" if s1 == s2 else "o")


def push_threshold(m: float, pressure: float) -> float:
    """The preflop score (0..1) a hand needs to move all-in at this M: the lower the M, the
    wider the range; a pay jump worth ``pressure`` of the player's ICM equity or more
    tightens it.

    >>> push_threshold(1.0, 0.0) < push_threshold(4.0, 0.0) < push_threshold(4.0, 0.9)
    True
    """
    threshold = 0.36 + 0.045 * max(0.0, min(m, PUSH_FOLD_M))
    return threshold + (TIGHTEN if pressure >= BUBBLE_PRESSURE else 0.0)


def m_from_stakes(state: dict[str, Any]) -> float:
    """A cash room's M (no tournament view): the stack over one orbit of the room's stakes.

    >>> m_from_stakes({"stakes": {"smallBlind": 5, "bigBlind": 10, "ante": 0},
    ...                "you": {"stack": 300}, "hand": {"players": [{}, {}]}})
    20.0
    """
    stakes = state.get("stakes") or {}
    dealt = len((state.get("hand") or {}).get("players", [])) or 1
    orbit = stakes.get("smallBlind", 0) + stakes.get("bigBlind", 0) + stakes.get("ante", 0) * dealt
    stack = (state.get("you") or {}).get("stack") or 0
    return float(stack) / orbit if orbit else 99.0


def _passive(legal: dict[str, Any]) -> str:
    return "check" if "check" in legal["actions"] else "fold"


def _commit(legal: dict[str, Any]) -> tuple[str, int | None]:
    """All-in, as the legal actions spell it."""
    actions = legal["actions"]
    if "all_in" in actions:
        return "all_in", None
    if "raise" in actions and legal.get("maxRaiseTo") is not None:
        return "raise", int(legal["maxRaiseTo"])
    return ("call", None) if "call" in actions else (_passive(legal), None)


def advise(state: dict[str, Any], rng: random.Random | None = None) -> Suggestion:
    """The advice for the player whose game state this is (it must be their turn)."""
    legal = state["legalActions"]
    actions = legal["actions"]
    view = state.get("tournamentMyView") or {}
    m = float(view["mRatio"]) if "mRatio" in view else m_from_stakes(state)
    jump = float(view.get("payJumpToNext", 0))
    icm_value = view.get("icmEquity")
    icm = float(icm_value) if icm_value is not None else 0.0
    pressure = jump / icm if icm > 0 else 0.0
    mtt = state.get("mtt") or {}
    if mtt.get("icmExact") is False and mtt.get("handForHand"):
        # A large MTT field's ICM is an estimate (docs/mtt.md): hand-for-hand says the bubble.
        pressure = BUBBLE_PRESSURE
    near_jump = pressure >= BUBBLE_PRESSURE
    tight = " (tighter: the pay jump)" if near_jump else ""
    cards = _my_cards(state)
    if len(cards) != 2:
        return Suggestion(_passive(legal), None, "your cards are not readable here: no risk")
    label = hand_label(cards)
    board = (state.get("hand") or {}).get("board", [])
    if not board:
        score = _preflop_score(cards)
        if m < PUSH_FOLD_M:
            if score >= push_threshold(m, pressure):
                action, amount = _commit(legal)
                return Suggestion(
                    action, amount, f"M {m:.1f}: push or fold; {label} is a push{tight}"
                )
            return Suggestion(
                _passive(legal), None, f"M {m:.1f}: push or fold; {label} is a fold{tight}"
            )
        strong = 0.62 + (TIGHTEN if near_jump else 0.0)
        if m < SHORT_M:
            if score >= strong:
                action, amount = _commit(legal)
                return Suggestion(
                    action, amount, f"M {m:.1f}: short; {label} is strong, shove{tight}"
                )
            if legal["toCall"] == 0:
                return Suggestion(_passive(legal), None, f"M {m:.1f}: {label}, see a free flop")
            return Suggestion("fold", None, f"M {m:.1f}: too short to call with {label}{tight}")
        if score >= strong + 0.05 and "raise" in actions:
            return Suggestion(
                "raise", int(legal["minRaiseTo"]), f"M {m:.1f}: {label} is a raise{tight}"
            )
        if legal["toCall"] == 0:
            return Suggestion(_passive(legal), None, f"M {m:.1f}: {label}, check")
        cheap = legal["toCall"] <= 0.1 * max(1, (state.get("you") or {}).get("stack") or 1)
        if score >= 0.45 and cheap and not near_jump and "call" in actions:
            return Suggestion("call", None, f"M {m:.1f}: {label} calls a small bet")
        return Suggestion("fold", None, f"M {m:.1f}: {label} folds to the bet{tight}")
    win = equity(cards, board, _opponents(state), rng or random.Random(0), trials=120)
    to_call = legal["toCall"]
    pot = (state.get("hand") or {}).get("pot", 0)
    odds = to_call / (pot + to_call) if to_call else 0.0
    need = odds + (0.1 if near_jump else 0.0)
    if win >= 0.7 + (0.05 if near_jump else 0.0):
        if m < SHORT_M:
            action, amount = _commit(legal)
            return Suggestion(action, amount, f"M {m:.1f}: {win:.0%} equity, get it in{tight}")
        if "raise" in actions:
            return Suggestion(
                "raise", int(legal["minRaiseTo"]), f"{win:.0%} equity with {label}: bet{tight}"
            )
    if to_call == 0:
        return Suggestion(_passive(legal), None, f"{win:.0%} equity with {label}: check")
    if win >= need and "call" in actions:
        return Suggestion("call", None, f"{win:.0%} equity beats the {odds:.0%} price{tight}")
    return Suggestion("fold", None, f"{win:.0%} equity is short of the {need:.0%} needed{tight}")


def opened(state: dict[str, Any], card_key: bytes | None) -> dict[str, Any]:
    """The state with the advised player's cards opened, when they came sealed to this
    advisor's card key (an advisor with a key on its Agent Card, docs/copilot.md)."""
    if card_key is None:
        return state
    box = SealedBox(PrivateKey(card_key))
    for seat in (state.get("hand") or {}).get("players", []):
        if seat.get("sealedHoleCards"):
            cards = json.loads(box.decrypt(base64.b64decode(seat["sealedHoleCards"])))
            seat["holeCards"] = [str(card) for card in cards]
    return state


async def run_advisor(
    url: str,
    key: str,
    tournament_id: str | None = None,
    *,
    room_id: str | None = None,
    delay: float = 0.0,
    seed: int = 0,
    card_key: bytes | None = None,
    log: list[dict[str, Any]] | None = None,
) -> None:
    """Advise on every request until the tournament ends or the room closes (the socket's
    ``end``): a tournament's players, or with ``room_id`` a cash room's. ``delay`` waits
    before each answer (a slow advisor); ``card_key`` opens the player's cards when they come
    sealed to the advisor's Agent Card; ``log``, when given, gets every frame either way
    (tests and debugging)."""
    if (tournament_id is None) == (room_id is None):
        raise ValueError("advise at one tournament or one room")
    path = f"/rooms/{room_id}" if room_id is not None else f"/tournaments/{tournament_id}"
    rng = random.Random(seed)
    ws_url = url.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
    async with connect(
        f"{ws_url}{path}/advisor/ws",
        additional_headers={"X-Agent-Key": key},
    ) as ws:
        async for raw in ws:
            message = json.loads(raw)
            if log is not None:
                log.append(message)
            if message.get("event") == "end":
                return
            if message.get("event") != "advice_request":
                continue
            request = message["data"]
            suggestion = advise(opened(request["gameState"], card_key), rng)
            if delay:
                await asyncio.sleep(delay)
            answer = {
                "type": "advice",
                "requestId": request["requestId"],
                "playerId": request["playerId"],
                "handNumber": request["handNumber"],
                "turn": request["turn"],
                "action": suggestion.action,
                "reason": suggestion.reason,
            }
            if suggestion.amount is not None:
                answer["amount"] = suggestion.amount
            if log is not None:
                log.append({"sent": answer})
            await ws.send(json.dumps(answer))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m sdk.advisor", description="The bundled CoPilot advisor (docs/copilot.md)."
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the API's base URL")
    parser.add_argument("--key", required=True, help="the advisor agent's key (sk_…)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--tournament", help="the copilot tournament's id")
    where.add_argument("--room", help="the copilot cash room's id")
    args = parser.parse_args(argv)
    asyncio.run(run_advisor(args.url, args.key, args.tournament, room_id=args.room))


if __name__ == "__main__":
    main()
