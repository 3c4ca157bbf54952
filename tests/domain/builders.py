"""Builders shared by the tests: a valid settings dict to vary one field at a time, and a
finished hand's engine record as a table builds it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.holdem import Hand, hand_record


def valid_settings_dict(**overrides: Any) -> dict[str, Any]:
    """A valid wire settings dict (camelCase), with any top-level field replaced."""
    raw: dict[str, Any] = {
        "seats": 9,
        "entryFee": 110,
        "rakeFee": 10,
        "startingStack": 1500,
        "actionTimeoutSeconds": 30,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 300,
        },
        "kind": "open",
    }
    raw.update(overrides)
    return {k: v for k, v in raw.items() if v is not ...}


def checked_down(
    deck: list[str],
    *,
    stacks: Sequence[int] = (100, 100, 100),
    blinds: Sequence[int] = (1, 2, 0),
    min_bet: int = 2,
) -> Hand:
    """Seats 0, 1, 2 dealt from ``deck``, each calling or checking to the showdown."""
    hand = Hand.start(
        seats=list(range(len(stacks))),
        stacks=list(stacks),
        blinds=list(blinds),
        antes=[0] * len(stacks),
        min_bet=min_bet,
        deck=deck,
    )
    while not hand.over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.act(legal.seat, "call" if "call" in legal.actions else "check")
    return hand


def engine_record(hand: Hand, **fields: Any) -> dict[str, Any]:
    """The record a table stores for ``hand`` (``hand_record`` plus the table's fields,
    engine keys), with any field given replaced."""
    record = hand_record(hand)
    record.update(
        table_id="table-t-1",
        hand_no=7,
        level=2,
        small_blind=5,
        big_blind=10,
        ante=0,
        players={str(seat): ("ann", "bob", "cat")[seat] for seat in hand.seats},
    )
    record.update(fields)
    return record
