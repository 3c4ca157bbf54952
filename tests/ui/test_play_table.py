"""The players' table page (issue 29) in headless Chromium: people play by clicking.

- two people and four bots play a tournament to the end, the people from the page;
- a person plays a cash room hand (a wrong amount first: the refusal shows; a dropped socket
  resumes the table), leaves, and has the right balance;
- an observer sees no hole cards, in the page or in any frame it received.

Every page is checked for page errors, console errors and requests to another host. Each
test saves screenshots (the ``screenshots`` fixture) for a human to look at.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from playwright.async_api import Browser, BrowserContext, Page, expect
from playwright.async_api import Error as PlaywrightError
from temporalio.client import Client

from core.settings import Settings
from db.engine import Database
from tests.integration.bots import play, shove
from tests.integration.helpers import (
    admin,
    balance,
    credit,
    eventually,
    player,
    start_paid_tournament,
)
from tests.integration.test_rooms import open_room, workflow_id
from wire.ids import table_workflow_id

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

TOURNAMENT = {
    "seats": 6,
    "entryFee": 10,
    "startingStack": 200,
    "actionTimeoutSeconds": 20,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 2, "levelDurationSeconds": 30},
}


@dataclass
class Watched:
    """What a page did that a test must see did not happen, and the frames it received."""

    origin: str
    errors: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    frames: list[Any] = field(default_factory=list)

    def check(self) -> None:
        assert self.errors == [], self.errors
        assert self.elsewhere == [], self.elsewhere


async def person(
    browser: Browser, url: str, name: str | None, viewport: dict[str, int] = DESKTOP
) -> tuple[BrowserContext, Page, Watched]:
    """A browser context signed in as ``name`` (dev sign-in), or anonymous, watched."""
    context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    context.set_default_timeout(15_000)
    page = await context.new_page()
    if name is not None:
        # Signed in before the watch starts: the sign-in and lobby pages are not this test's
        # (their base template has no icon: the browser's /favicon.ico is a 404).
        await page.goto(f"{url}/play/signin")
        await page.get_by_label("Sign in as (development only)").fill(name)
        await page.get_by_role("button", name="Sign in", exact=True).click()
        await expect(page).to_have_url(f"{url}/play")
    origin = urlsplit(url).netloc
    watched = Watched(origin)
    page.on("pageerror", lambda err: watched.errors.append(f"pageerror: {err}"))
    page.on(
        "console",
        lambda msg: (
            watched.errors.append(f"console: {msg.text} at {msg.location.get('url')}")
            if msg.type == "error"
            else None
        ),
    )

    def on_request(request: Any) -> None:
        if urlsplit(request.url).netloc != origin:
            watched.elsewhere.append(request.url)

    def on_socket(ws: Any) -> None:
        if urlsplit(ws.url).netloc != origin:
            watched.elsewhere.append(ws.url)
        ws.on("framereceived", lambda payload: watched.frames.append(_json(payload)))

    async def on_response(response: Any) -> None:
        if response.status >= 400:
            watched.errors.append(f"{response.status}: {response.url}")
        if "/game-state" in response.url or "/events" in response.url:
            with contextlib.suppress(PlaywrightError):
                watched.frames.append(_json(await response.text()))

    page.on("request", on_request)
    page.on("websocket", on_socket)
    page.on("response", on_response)
    return context, page, watched


def _json(payload: Any) -> Any:
    text = payload if isinstance(payload, str) else bytes(payload).decode()
    try:
        return json.loads(text)
    except ValueError:
        return text  # an SSE body: checked as text


def enabled_button(page: Page, name: str) -> Any:
    """The action button ``name`` while it is shown and enabled (count() answers at once)."""
    return page.get_by_role("button", name=name, exact=True).and_(
        page.locator("#actions:not([hidden]) button:enabled")
    )


async def click_until_over(page: Page, prefer: list[str], limit: float = 150) -> int:
    """Play from the page: on each turn click the first enabled button of ``prefer``, until
    the page says the tournament is over. Returns how many actions were clicked."""
    clicks = 0
    over = page.locator("#over")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not await over.is_visible():
        assert loop.time() < deadline, "the tournament did not end in time"
        for name in prefer:
            button = enabled_button(page, name)
            if await button.count():
                with contextlib.suppress(PlaywrightError):
                    await button.click(timeout=1_000)
                    clicks += 1
                break
        else:
            await page.wait_for_timeout(100)
    return clicks


@contextlib.asynccontextmanager
async def background(coro: Any) -> AsyncIterator[asyncio.Task[Any]]:
    task = asyncio.ensure_future(coro)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def test_two_people_and_four_bots_play_a_tournament_to_the_end_by_clicking(
    browser: Browser,
    ui_url: str,
    client: Client,
    db: Database,
    task_queue: str,
    screenshots: Path,
) -> None:
    tid = f"uit-{uuid.uuid4().hex[:8]}"
    await start_paid_tournament(client, db, task_queue, tid, TOURNAMENT, hand_pause_ms=300)
    people = [f"{tid}-0", f"{tid}-1"]
    bots = [f"{tid}-{n}" for n in range(2, 6)]
    ann, ann_page, ann_seen = await person(browser, ui_url, people[0])
    bob, bob_page, bob_seen = await person(browser, ui_url, people[1], PHONE)
    eve, eve_page, eve_seen = await person(browser, ui_url, None)
    cal, cal_page, cal_seen = await person(browser, ui_url, f"{tid}-watcher")
    try:
        for page in (eve_page, cal_page):
            await page.goto(f"{ui_url}/play/tournaments/{tid}/table")
            await expect(page.get_by_text("You are watching")).to_be_visible()
        # A signed-in observer reads the spectator's game state: the seats, no "You".
        await expect(cal_page.locator("#seats .seat")).to_have_count(6, timeout=30_000)
        for page in (ann_page, bob_page):
            await page.goto(f"{ui_url}/play/tournaments/{tid}/table")
            await expect(page.get_by_role("heading", name=tid)).to_be_visible()
        # Ann's first turn: the table, her cards, the tournament's view of her.
        await expect(ann_page.locator("#hole .card")).to_have_count(2, timeout=30_000)
        await expect(ann_page.locator("#seats .seat")).to_have_count(6)
        await expect(ann_page.locator("#my-view")).to_be_visible()
        await expect(ann_page.locator("#level")).to_contain_text("Blinds 10/20")
        await ann_page.screenshot(path=str(screenshots / "play-table-tournament.png"))
        await expect(bob_page.locator("#hole .card")).to_have_count(2)
        await bob_page.screenshot(
            path=str(screenshots / "play-table-tournament-phone-start.png"), full_page=True
        )
        async with background(play(client, table_workflow_id(tid), bots, shove, limit=150)):
            clicks = await asyncio.gather(
                click_until_over(ann_page, ["All-in", "Call", "Check"]),
                click_until_over(bob_page, ["Check", "Call", "Fold"]),
            )
        assert all(n > 0 for n in clicks), clicks
        for page in (ann_page, bob_page):
            await expect(page.locator("#over")).to_contain_text("The tournament is over.")
            await expect(page.get_by_role("link", name="See the results")).to_have_attribute(
                "href", f"/play/tournaments/{tid}/results"
            )
        await bob_page.screenshot(
            path=str(screenshots / "play-table-tournament-phone.png"), full_page=True
        )
        # The anonymous observer followed the public events to the end, and saw no cards.
        await expect(eve_page.locator("#over")).to_be_visible()
        await expect(eve_page.locator("#log")).to_contain_text("The tournament has ended")
        assert await eve_page.locator("#hole, #seats .card").count() == 0
        assert "holeCards" not in json.dumps(eve_seen.frames)
        eve_seen.check()
        await expect(cal_page.locator("#over")).to_be_visible()
        states = [f for f in cal_seen.frames if isinstance(f, dict) and "version" in f]
        assert states and all(f["you"] is None for f in states)
        assert all(
            p["holeCards"] is None
            for f in states
            if f["hand"]
            for p in f["hand"]["players"]
            if not f["hand"]["over"]
        )
        assert await cal_page.locator("#hole").count() == 0
        cal_seen.check()
        async with httpx.AsyncClient(base_url=ui_url, timeout=15) as http:
            r = await http.get(f"/tournaments/{tid}")
            assert r.json()["state"] in ("ended", "settling", "closed"), r.text
        # The page never polled the table: its game states came over the socket only.
        for seen in (ann_seen, bob_seen):
            seen.check()
            assert not [f for f in seen.frames if isinstance(f, dict) and "version" in f]
    finally:
        for context in (ann, bob, eve, cal):
            await context.close()


def _fold_or_check(legal: dict[str, Any]) -> tuple[str, int | None]:
    """Hands end without a showdown: nothing is ever shown."""
    return ("fold", None) if "fold" in legal["actions"] else ("check", None)


async def test_a_person_plays_a_room_hand_sees_a_refusal_reconnects_and_leaves(
    browser: Browser, ui_url: str, ui_settings: Settings, client: Client, screenshots: Path
) -> None:
    me, bot = f"uir-{uuid.uuid4().hex[:6]}", f"uib-{uuid.uuid4().hex[:6]}"
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        room_id = await open_room(http, ui_settings, seats=2, handPauseMs=300, speed="normal")
        for user in (me, bot):
            await credit(http, ui_settings, user, 5000)
            r = await http.post(
                f"/rooms/{room_id}/join", json={}, headers=player(ui_settings, user)
            )
            assert r.status_code == 200, r.text
        context, page, watched = await person(browser, ui_url, me)
        try:
            async with background(play(client, workflow_id(room_id), [bot], limit=120)):
                await page.goto(f"{ui_url}/play/rooms/{room_id}/table")
                enabled = page.locator("#actions button:enabled")
                await expect(enabled.first).to_be_visible(timeout=30_000)
                await expect(page.locator("#hole .card")).to_have_count(2)
                await page.screenshot(path=str(screenshots / "play-table-room.png"))

                # The pot shortcuts set an amount within the legal bounds.
                amount = page.get_by_label("Amount (bet or raise to)")
                low = int(await amount.get_attribute("min") or 0)
                top = int(await amount.get_attribute("max") or 0)
                assert 0 < low <= top
                await page.get_by_role("button", name="Pot", exact=True).click()
                assert low <= int(await amount.input_value()) <= top
                # A wrong amount, sent as typed: the refusal shows, nothing changed.
                await amount.fill(str(top + 1000))
                await amount.press("Enter")
                alert = page.get_by_role("alert")
                await expect(alert).to_be_visible()
                await expect(alert).to_contain_text(re.compile(r"\w"))
                await page.screenshot(path=str(screenshots / "play-table-room-refusal.png"))
                await expect(enabled.first).to_be_visible()

                # The socket drops: the page says so, resumes, and the person still acts.
                before = await page.locator("#table").get_attribute("data-connections")
                await page.evaluate("window.sngTable.socket.close()")
                await expect(page.get_by_text("Reconnecting…")).to_be_visible()
                await expect(page.locator("#table")).to_have_attribute(
                    "data-connections", str(int(before or 0) + 1)
                )
                await expect(page.get_by_text("Reconnecting…")).to_be_hidden()
                await expect(enabled.first).to_be_visible()  # the same turn, asked again
                hand = await page.evaluate("window.sngTable.game.handNumber")
                # By keyboard this time: the focused button, Enter.
                for name in ("Check", "Call"):
                    button = enabled_button(page, name)
                    if await button.count():
                        await button.focus()
                        await page.keyboard.press("Enter")
                        break
                else:
                    raise AssertionError("neither Check nor Call was enabled after reconnecting")
                await expect(page.get_by_role("alert")).to_be_hidden()
                # Play the hand out (Check else Call) until its result shows.
                result = page.locator("#log li", has_text=f"Hand {hand}:")
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 60
                while not await result.count():
                    assert loop.time() < deadline, "the hand did not end"
                    for name in ("Check", "Call"):
                        button = enabled_button(page, name)
                        if await button.count():
                            with contextlib.suppress(PlaywrightError):
                                await button.click(timeout=1_000)
                            break
                    else:
                        await page.wait_for_timeout(100)
                await page.set_viewport_size(PHONE)  # type: ignore[arg-type]
                await page.screenshot(
                    path=str(screenshots / "play-table-room-phone.png"), full_page=True
                )

                r = await http.post(f"/rooms/{room_id}/leave", headers=player(ui_settings, me))
                assert r.status_code in (200, 202), r.text

                async def left() -> dict[str, Any] | None:
                    r = await http.get(f"/rooms/{room_id}/events.json")
                    for event in r.json()["events"]:
                        if event["type"] == "player_leave" and event["data"]["player"] == me:
                            return dict(event["data"])
                    return None

                leave = await eventually(left, limit=60)
            returned = int(leave["returned"])
            assert await balance(http, ui_settings, me) == 5000 - 1000 + returned
            await expect(page.locator("#log")).to_contain_text(f"{me} leaves with {returned:,}")
            watched.check()
        finally:
            await context.close()
            await http.post(f"/rooms/{room_id}/close", headers=admin(ui_settings))


def _private(node: Any) -> list[Any]:
    """Every hole card or shown hand in a received frame."""
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k in ("holeCards", "sealedHoleCards") and v]
        found += [v for k, v in node.items() if k == "shown" and v]
        return found + [x for v in node.values() for x in _private(v)]
    if isinstance(node, list):
        return [x for v in node for x in _private(v)]
    return []


async def test_an_observer_sees_no_hole_cards(
    browser: Browser, ui_url: str, ui_settings: Settings, client: Client, screenshots: Path
) -> None:
    users = [f"uio-{n}-{uuid.uuid4().hex[:6]}" for n in "ab"]
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        room_id = await open_room(http, ui_settings, seats=2, handPauseMs=200)
        for user in users:
            await credit(http, ui_settings, user, 5000)
            r = await http.post(
                f"/rooms/{room_id}/join", json={}, headers=player(ui_settings, user)
            )
            assert r.status_code == 200, r.text
        context, page, watched = await person(browser, ui_url, None, PHONE)
        try:
            async with background(
                play(client, workflow_id(room_id), users, _fold_or_check, limit=120)
            ):
                await page.goto(f"{ui_url}/play/rooms/{room_id}/table")
                await expect(page.get_by_text("You are watching")).to_be_visible()
                await expect(page.locator("#seats .seat")).to_have_count(2, timeout=30_000)
                await expect(page.locator("#log li", has_text="Hand 3:")).to_be_visible(
                    timeout=60_000
                )
            await page.screenshot(path=str(screenshots / "play-table-observer-phone.png"))
            # No cards on the page but the board's, no action buttons, no private frame.
            assert await page.locator("#hole").count() == 0
            assert await page.locator("#seats .card").count() == 0
            assert await page.get_by_role("button", name="Fold").count() == 0
            frames = [f for f in watched.frames if isinstance(f, dict)]
            assert len(frames) > 5
            assert any(f.get("event") == "hand_result" for f in frames)
            assert _private(frames) == [], _private(frames)[:3]
            # The page names each hand's winner right (a room's events count seats from 1).
            names: dict[int, dict[int, str]] = {}
            log = await page.locator("#log").inner_text()
            checked = 0
            for frame in frames:
                data = frame.get("data") or {}
                if frame.get("event") == "hand_start":
                    names[data["handNumber"]] = {s["seat"]: s["player"] for s in data["seats"]}
                number = data.get("handNumber")
                if frame.get("event") != "hand_result" or f"Hand {number}:" not in log:
                    continue  # the log keeps the newest lines only
                for pot in data["pots"]:
                    for seat in pot["winners"]:
                        assert f"Hand {number}: {names[number][int(seat)]} wins" in log, log
                        checked += 1
            assert checked
            watched.check()
        finally:
            await context.close()
            await http.post(f"/rooms/{room_id}/close", headers=admin(ui_settings))
