"""The cash-room admin pages end to end in headless Chromium: list, create, a room, close.

Each test saves screenshots (see the ``screenshots`` fixture) for a human to look at.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
from playwright.async_api import Page, expect
from temporalio.client import Client

from core.settings import Settings
from tests.integration.bots import play
from tests.integration.helpers import admin, balance, credit, eventually, player
from tests.integration.test_rooms import open_room, record, status_is, workflow_id
from tests.ui.test_admin_pages import login


async def room_names(http: httpx.AsyncClient, status: str | None = None) -> list[str]:
    params = {"status": status, "limit": 500} if status else {"limit": 500}
    r = await http.get("/rooms", params=params)
    assert r.status_code == 200, r.text
    return [room["name"] for room in r.json()]


async def test_room_pages_need_the_session(page: Page, ui_url: str, ui_settings: Settings) -> None:
    for path in ("/ui/rooms", "/ui/rooms/new", "/ui/rooms/room_abc", "/ui/rooms/rows"):
        await page.goto(ui_url + path)
        await expect(page).to_have_url(f"{ui_url}/ui/login")
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        room_id = await open_room(http, ui_settings)
        # Without a session nothing is created or closed.
        r = await http.post("/ui/rooms/new", data={"name": "nope"})
        assert (r.status_code, r.headers["location"]) == (303, "/ui/login")
        r = await http.post(f"/ui/rooms/{room_id}/close", data={"confirm": "on"})
        assert (r.status_code, r.headers["location"]) == (303, "/ui/login")

        # With one, a POST still needs the page's form token.
        await login(page, ui_url, ui_settings.key("admin"))
        forged = await page.request.post(
            f"{ui_url}/ui/rooms/{room_id}/close", form={"csrf": "x", "confirm": "on"}
        )
        assert forged.status == 403
        forged = await page.request.post(
            f"{ui_url}/ui/rooms/new", form={"csrf": "x", "name": "forged-room"}
        )
        assert forged.status == 403
        assert (await record(http, room_id))["status"] == "waiting"
        assert "forged-room" not in await room_names(http)

        # The open list refreshes itself: a room closed elsewhere leaves it without a reload.
        await page.goto(f"{ui_url}/ui/rooms")
        row = page.locator(f"tr[data-room-id='{room_id}']")
        await expect(row.locator(".state")).to_have_text("waiting")
        await page.evaluate("window.__noReload = true")
        r = await http.post(f"/rooms/{room_id}/close", headers=admin(ui_settings))
        assert r.status_code == 200, r.text
        await expect(row).to_have_count(0, timeout=15_000)
        assert await page.evaluate("window.__noReload === true")

        # An unknown room is the same 404 page as an unknown tournament.
        response = await page.goto(f"{ui_url}/ui/rooms/room_0000000000")
        assert response is not None and response.status == 404
        await expect(page.get_by_role("heading", name="No room room_0000000000")).to_be_visible()
        await page.get_by_role("link", name="Back to the list.").click()
        await expect(page).to_have_url(f"{ui_url}/ui/rooms")


async def test_create_list_see_and_close_a_room_through_the_pages(
    page: Page, ui_url: str, ui_settings: Settings, screenshots: Path
) -> None:
    name = f"UI room {uuid.uuid4().hex[:6]}"
    await login(page, ui_url, ui_settings.key("admin"))
    await page.get_by_role("link", name="Rooms", exact=True).click()
    await expect(page).to_have_url(f"{ui_url}/ui/rooms")
    await expect(page.get_by_role("heading", name="Cash rooms")).to_be_visible()
    await page.get_by_role("link", name="New room").first.click()
    await expect(page).to_have_url(f"{ui_url}/ui/rooms/new")
    await expect(page.locator("#room-preview")).to_contain_text("100 big blinds")

    await page.fill("#in-name", name)
    await page.fill("#in-entry-amount", "2000")
    await page.fill("#in-stakes-smallBlind", "25")
    await page.fill("#in-stakes-bigBlind", "10")
    await page.fill("#in-seats", "3")
    await page.select_option("#in-speed", "turbo")
    await page.fill("#in-handPauseMs", "0")
    # Live: the cross-field rule's message appears beside the big blind while typing.
    error = page.locator("#err-stakes-bigBlind")
    await expect(error).to_have_text("must be at least stakes.smallBlind")
    await expect(error).to_have_attribute("data-code", "invalid_settings")
    await expect(page.locator("#room-preview")).to_have_count(0)

    # Submitted anyway: refused with the message beside the field, and nothing is created.
    await page.click("#create-button")
    await expect(page).to_have_url(f"{ui_url}/ui/rooms/new")
    await expect(error).to_have_text("must be at least stakes.smallBlind")
    await expect(error).to_have_attribute("data-code", "invalid_settings")
    await expect(page.locator("#in-name")).to_have_value(name)
    await page.screenshot(path=screenshots / "room-create-refused.png", full_page=True)
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        assert name not in await room_names(http)
        assert name not in await room_names(http, "closed")
        # A schema fault too is a message beside its field, never a 500.
        r = await page.request.post(
            f"{ui_url}/ui/rooms/new",
            form={
                "csrf": await page.locator("input[name=csrf]").first.input_value(),
                "name": name,
                "entry.amount": "lots",
                "stakes.smallBlind": "5",
                "stakes.bigBlind": "10",
                "seats": "12",
                "speed": "fast",
                "handPauseMs": "",
            },
        )
        assert r.status == 422
        html = await r.text()
        assert "Input should be less than or equal to 9" in html
        assert "Input should be a valid integer" in html
        assert name not in await room_names(http)

        await page.fill("#in-stakes-smallBlind", "5")
        await expect(error).to_have_text("")
        await expect(page.locator("#room-preview")).to_contain_text("200 big blinds")
        await expect(page.locator("#room-preview")).to_contain_text("10 s (turbo)")
        await page.click("#create-button")
        await expect(page).to_have_url(re.compile(rf"{ui_url}/ui/rooms/room_[0-9a-f]{{32}}$"))
        room_id = page.url.rsplit("/", 1)[-1]
        await expect(page.get_by_role("heading", name=name)).to_be_visible()
        await expect(page.locator("#state")).to_have_text("waiting")
        await expect(page.locator("#stakes")).to_have_text("5/10")
        await expect(page.locator("#entry")).to_have_text("2,000 virtual_chips")
        await expect(page.locator("#seats-taken")).to_have_text("0/3")
        await expect(page.locator("#speed")).to_have_text("turbo")
        await expect(page.locator("#decision-timeout")).to_have_text("10 s")
        await expect(page.locator("#disconnect-grace")).to_have_text("30 s")
        await expect(page.locator("#no-players")).to_be_visible()
        await expect(page.locator("#no-hands")).to_be_visible()
        await expect(page.locator("#events-link")).to_have_attribute(
            "href", f"/rooms/{room_id}/events.json"
        )
        stream = await page.request.get(f"{ui_url}/rooms/{room_id}/events.json")
        assert stream.status == 200 and "events" in await stream.json()
        await page.screenshot(path=screenshots / "room-detail.png", full_page=True)
        rec = await record(http, room_id)
        assert (rec["name"], rec["seats"], rec["speed"]) == (name, 3, "turbo")
        assert (rec["entry"]["amount"], rec["stakes"]) == (2000, {"smallBlind": 5, "bigBlind": 10})

        # Listed among the open rooms, with its row's columns.
        await page.get_by_role("link", name="Rooms", exact=True).click()
        row = page.locator(f"tr[data-room-id='{room_id}']")
        await expect(row.locator(".state")).to_have_text("waiting")
        await expect(row.locator(".seats-taken")).to_have_text("0/3")
        await expect(row.locator(".stakes")).to_have_text("5/10")
        await expect(row).to_contain_text("2,000")
        await expect(row).to_contain_text("turbo")
        await expect(page.locator("#room-rows")).to_have_attribute(
            "hx-trigger", f"every {ui_settings.admin_refresh_seconds:g}s"
        )
        await page.screenshot(path=screenshots / "room-list.png", full_page=True)
        await row.get_by_role("link", name=name).click()
        await expect(page).to_have_url(f"{ui_url}/ui/rooms/{room_id}")

        # Closed from its page: nobody is seated, so it closes at once.
        await page.check("input[name=confirm]")
        await page.click("#close-button")
        await expect(page).to_have_url(re.compile(rf"{ui_url}/ui/rooms/{room_id}(\?closing=1)?$"))
        await expect(page.locator("#flash")).to_have_count(0)
        await expect(page.locator("#state")).to_have_text(re.compile(r"^(closing|closed)$"))

        async def shows_closed() -> bool:
            await page.goto(f"{ui_url}/ui/rooms/{room_id}")
            return await page.locator("#state").text_content() == "closed"

        await eventually(shows_closed, limit=15)
        await expect(page.locator("#close-button")).to_have_count(0)
        await expect(page.locator("#close-unavailable")).to_be_visible()
        await page.screenshot(path=screenshots / "room-closed.png", full_page=True)

        # Gone from the open list, in the closed one.
        await page.goto(f"{ui_url}/ui/rooms")
        await expect(page.locator(f"tr[data-room-id='{room_id}']")).to_have_count(0)
        await page.click("#show-closed")
        await expect(page).to_have_url(f"{ui_url}/ui/rooms?status=closed")
        closed_row = page.locator(f"tr[data-room-id='{room_id}']")
        await expect(closed_row.locator(".state")).to_have_text("closed")

        # Closing again changes nothing and refuses nothing.
        again = await page.request.post(
            f"{ui_url}/ui/rooms/{room_id}/close",
            form={
                "csrf": await page.locator("input[name=csrf]").first.input_value(),
                "confirm": "on",
            },
            max_redirects=0,
        )
        assert (again.status, again.headers["location"]) == (303, f"/ui/rooms/{room_id}")


async def test_a_played_room_shows_players_and_hands_then_closes_after_its_hand(
    page: Page, ui_url: str, ui_settings: Settings, client: Client, screenshots: Path
) -> None:
    users = [f"ui-rm-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        for u in users:
            await credit(http, ui_settings, u, 5000)
        room_id = await open_room(http, ui_settings, name="UI played room")
        for u in users:
            r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(ui_settings, u))
            assert r.status_code == 200, r.text
        await eventually(lambda: status_is(http, room_id, "playing"))
        await play(client, workflow_id(room_id), users, until=lambda v: v.hand_no >= 3)

        await login(page, ui_url, ui_settings.key("admin"))
        await page.goto(f"{ui_url}/ui/rooms/{room_id}")
        await expect(page.locator("#state")).to_have_text("playing")
        players = page.locator("#players tbody tr")
        await expect(players).to_have_count(2)
        await expect(players.first).to_contain_text(users[0])
        await expect(page.locator("#seats-taken")).to_have_text("2/3")
        # The newest finished hand first; a hand may finish on a timeout while we look, so the
        # page's own newest hand is the reference.
        rows = page.locator("#hands tbody tr")
        await expect(rows.first).to_be_visible()
        newest_no = int(await rows.first.locator("td").nth(0).inner_text())
        assert newest_no >= 2
        await expect(rows).to_have_count(newest_no)
        hands = {h["handNumber"]: h for h in (await http.get(f"/rooms/{room_id}/hands")).json()}
        newest = hands[newest_no]
        net = rows.first.locator("td").nth(3)
        await expect(rows.first.locator("td").nth(2)).to_have_text(f"{newest['grossPot']:,}")
        seated = (await http.get(f"/rooms/{room_id}/hands/{newest_no}")).json()["players"]
        for seat, chips in newest["netToWinner"].items():
            # Seats from 1 as the room record numbers them; the hand record keeps the
            # table's indices.
            handle = seated[str(int(seat) - 1)]
            await expect(net).to_contain_text(f"seat {seat} {handle}: {chips:,}")
        assert int(await page.locator("#hand-number").inner_text()) >= newest_no
        await page.screenshot(path=screenshots / "room-played.png", full_page=True)

        # Closing with a hand running: "closing" until the players finish it, then closed.
        await page.check("input[name=confirm]")
        await page.click("#close-button")
        await expect(page).to_have_url(re.compile(rf"{ui_url}/ui/rooms/{room_id}(\?closing=1)?$"))
        await expect(page.locator("#flash")).to_have_count(0)
        await expect(page.locator("#state")).to_have_text(re.compile(r"^(closing|closed)$"))
        await expect(page.locator("#close-button")).to_have_count(0)
        if await page.locator("#state").inner_text() == "closing":
            await expect(page.locator("#closing-note")).to_be_visible()
        await page.screenshot(path=screenshots / "room-closing.png", full_page=True)
        await play(client, workflow_id(room_id), users, until=lambda v: v.finished)

        async def shows_closed() -> bool:
            await page.goto(f"{ui_url}/ui/rooms/{room_id}")
            return await page.locator("#state").text_content() == "closed"

        await eventually(shows_closed, limit=15)
        await expect(page.locator("#no-players")).to_be_visible()
        await expect(page.locator("#close-button")).to_have_count(0)
        # Every stack went home.
        assert sum([await balance(http, ui_settings, u) for u in users]) == 2 * 5000
