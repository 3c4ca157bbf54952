"""The verifier page (/verify) checks a record in the browser, with no help from the server:
an honest record passes; a changed card, salt or seed (rehashed by the forger) and a changed
byte without rehashing fail. The record is built as a table builds it (engine, commitments,
the served model)."""

from __future__ import annotations

import copy
import json
from typing import Any

from playwright.async_api import Page

from domain import fairness
from domain.holdem import Hand, hand_record
from wire.game_state import HandRecord


def served_record(seed: int) -> dict[str, Any]:
    deck = fairness.commit(bytes([seed]) * 32)
    seeds = {0: b"ann", 2: bytes(range(32))}
    cards, order = fairness.dealt_deck(deck, seeds)
    hand = Hand.start(
        seats=[0, 1, 2],
        stacks=[200, 200, 200],
        blinds=[1, 2, 0],
        antes=[0, 0, 0],
        min_bet=2,
        deck=cards,
    )
    while not hand.over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.act(legal.seat, "call" if "call" in legal.actions else "check")
    record = hand_record(hand)
    shown = {int(s) for s in record["shown"]}
    public, _ = fairness.reveal(
        deck, order, seats=hand.seats, board_size=len(record["board"]), shown=shown
    )
    record["hole_cards"] = {s: c for s, c in record["hole_cards"].items() if int(s) in shown}
    record.update(
        table_id="room-x",
        hand_no=3,
        level=0,
        small_blind=1,
        big_blind=2,
        ante=0,
        players={"0": "ann", "1": "bob", "2": "cat"},
        deck_commitment=deck.root_hex,
        deck={
            "version": "v2",
            "root": deck.root_hex,
            "committed_at_ms": 1,
            "seeds": {str(s): v.hex() for s, v in seeds.items()},
            "revealed": public,
        },
        prev_hash="11" * 32,
    )
    served = HandRecord.model_validate(record).to_wire()
    served["hash"] = fairness.record_hash(served)
    assert fairness.verify_record(served) == []
    return served


async def check(page: Page, record: dict[str, Any], previous: str = "") -> str:
    await page.fill("#record", json.dumps(record))
    await page.fill("#previous", previous)
    await page.click("#check")
    await page.wait_for_function(
        "!['', 'checking…'].includes(document.getElementById('result').textContent)"
    )
    return str(await page.text_content("#result"))


async def test_the_page_accepts_an_honest_record_and_refuses_a_forged_one(
    page: Page, ui_url: str
) -> None:
    await page.goto(f"{ui_url}/verify")
    record = served_record(5)
    assert (await check(page, record, "11" * 32)).startswith("OK"), await check(page, record)
    assert "link" in await check(page, record, "22" * 32)

    def card(r: dict[str, Any]) -> None:
        item = r["deck"]["revealed"][0]
        new = "2c" if item["card"] != "2c" else "3c"
        r["board"] = [new if c == item["card"] else c for c in r["board"]]
        item["card"] = new

    def salt(r: dict[str, Any]) -> None:
        r["deck"]["revealed"][-1]["salt"] = "00" * 32

    def seed(r: dict[str, Any]) -> None:
        r["deck"]["seeds"]["1"] = "ab"

    for change in (card, salt, seed):
        forged = copy.deepcopy(record)
        change(forged)
        forged["hash"] = fairness.record_hash(forged)
        assert fairness.verify_record(forged), change.__name__
        assert (await check(page, forged)).startswith("FAIL"), change.__name__
    untouched_hash = copy.deepcopy(record)
    untouched_hash["stacksAfter"]["0"] += 1
    assert "hash" in await check(page, untouched_hash)
