"""What the outside world sees of a hand: one viewer's view while it runs, the record after.

The view never contains another player's hole cards unless they were shown down; the record
carries everything a hand history needs (the workflow adds hand number, level, commitment and
the revealed seed).
"""

from __future__ import annotations

from typing import Any

from domain.holdem.evaluate import hand_name
from domain.holdem.hand import STREETS, Hand


def public_view(hand: Hand, viewer: int | None = None) -> dict[str, Any]:
    """Public state plus ``viewer``'s own hole cards (a seat number; None for a spectator)."""
    shown = set(hand.result["shown"]) if hand.result else set()
    legal = hand.legal_actions()
    players = []
    for i, seat in enumerate(hand.seats):
        visible = seat == viewer or i in shown
        players.append(
            {
                "seat": seat,
                "stack": hand.stacks[i],
                "bet": hand.bets[i],
                "committed": hand.committed[i],
                "folded": hand.folded[i],
                "all_in": hand.stacks[i] == 0 and not hand.folded[i],
                "hole_cards": list(hand.hole[i]) if visible else None,
            }
        )
    return {
        "street": STREETS[hand.street],
        "button": hand.button,
        "board": list(hand.board),
        "pot": hand.pot_total if not hand.over else 0,
        "players": players,
        "actor": hand.actor_seat,
        "turn": hand.turn,
        "legal": legal.to_dict() if legal is not None and hand.actor_seat == viewer else None,
        "actions": [dict(entry) for entry in hand.actions],
        "over": hand.over,
        "pots": hand.result["pots"] if hand.result else None,
    }


def private_parts(hand: Hand) -> dict[int, list[str]]:
    """Each seat's secret while the hand runs: its hole cards (by seat). Nothing once the hand
    is over: what was shown down is public, the rest is nobody's to read any more."""
    if hand.over:
        return {}
    return {seat: list(hand.hole[i]) for i, seat in enumerate(hand.seats)}


def actor_legal(hand: Hand) -> dict[str, Any] | None:
    """The legal actions of the seat to act (public: anyone can work them out)."""
    legal = hand.legal_actions()
    return legal.to_dict() if legal is not None and hand.actor_seat is not None else None


def viewer_view(
    spectator: dict[str, Any],
    seat: int | None,
    hole: list[str] | None,
    legal: dict[str, Any] | None,
) -> dict[str, Any]:
    """One seat's view, composed from the spectator's view (``public_view(hand, None)``), that
    seat's private part and the actor's legal actions: what a read store holding the public
    part and sealed private parts serves. While the hand runs it equals
    ``public_view(hand, seat)``; once it is over a seat sees only what was shown."""
    if seat is None:
        return spectator
    players = [
        {**p, "hole_cards": hole} if p["seat"] == seat and p["hole_cards"] is None and hole else p
        for p in spectator["players"]
    ]
    mine = spectator["actor"] == seat and not spectator["over"]
    return {**spectator, "players": players, "legal": legal if mine else None}


def hand_record(hand: Hand) -> dict[str, Any]:
    """The finished hand as plain data; raises if the hand is still running."""
    if not hand.over or hand.result is None:
        raise ValueError("the hand is not over")
    result = hand.result
    shown = {
        str(hand.seats[i]): {
            "cards": list(hand.hole[i]),
            "hand": hand_name(result["strengths"][i]),
        }
        for i in result["shown"]
    }
    seats = hand.seats
    return {
        "seats": list(seats),
        "button": hand.button,
        "blinds": {str(s): b for s, b in zip(hand.seats, hand.blinds, strict=True) if b},
        "antes": {str(s): a for s, a in zip(hand.seats, hand.antes, strict=True) if a},
        "posted_blinds": {
            str(s): b for s, b in zip(hand.seats, hand.posted_blinds, strict=True) if b
        },
        "posted_antes": {str(s): a for s, a in zip(seats, hand.posted_antes, strict=True) if a},
        "dead_antes": hand.dead_antes,
        "min_bet": hand.min_bet,
        "stacks_before": {str(s): c for s, c in zip(hand.seats, hand.starting_stacks, strict=True)},
        "stacks_after": {str(s): c for s, c in zip(hand.seats, hand.stacks, strict=True)},
        "hole_cards": {str(s): list(cards) for s, cards in zip(hand.seats, hand.hole, strict=True)},
        "actions": [dict(entry) for entry in hand.actions],
        "board": list(hand.board),
        "showdown_order": [hand.seats[i] for i in result["showdown_order"]],
        "shown": shown,
        "pots": [dict(pot) for pot in result["pots"]],
        "busted": [
            {"seat": seat, "stack_before": hand.starting_stacks[i]}
            for i, seat in enumerate(hand.seats)
            if hand.stacks[i] == 0
        ],
    }
