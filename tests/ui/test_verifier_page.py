"""The verifier page (/verify) checks a record in the browser, with no help from the server:
an honest record passes; a changed card, salt or seed (rehashed by the forger) and a changed
byte without rehashing fail. The record is built as a table builds it (engine, ``fairness.publish``,
the served model)."""

from __future__ import annotations

import copy
import json
from typing import Any

from playwright.async_api import Page

from domain import fairness
from tests.domain.builders import checked_down, engine_record
from wire.game_state import HandRecord


def served_record(seed: int) -> dict[str, Any]:
    deck = fairness.commit(bytes([seed]) * 32)
    seeds = {0: b"ann", 2: bytes(range(32))}
    cards, order = fairness.dealt_deck(deck, seeds)
    hand = checked_down(cards, stacks=(200, 200, 200))
    record = engine_record(hand, table_id="room-x", hand_no=3, level=0, small_blind=1, big_blind=2)
    record["deck_commitment"] = deck.root_hex
    fairness.publish(
        record,
        deck,
        order,
        seats=hand.seats,
        seeds={seat: value.hex() for seat, value in seeds.items()},
        committed_ms=1,
        prev_hash="11" * 32,
        served=lambda r: HandRecord.model_validate(r).to_wire(),
    )
    served = HandRecord.model_validate(record).to_wire()
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
