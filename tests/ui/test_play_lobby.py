"""The players' lobby, tournament, room and results pages (issue 29) in headless Chromium,
driven as a person drives them: sign in by name, read the lists, register, pay and leave by
clicking, see each refusal as its sentence, join and leave a cash room, read a finished
tournament's results and open a hand in the verifier.

Every test checks that no page raised an error, that the console logged none beyond the
refusals it provoked, and that no request left the service's origin.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import (
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    ViewportSize,
    expect,
)
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from tests.conftest import serve_api
from tests.integration.bots import Policy, passive, play, shove
from tests.integration.helpers import admin, balance, credit, eventually, player
from tests.integration.test_rooms import open_room, record, workflow_id

ENTRY_FEE = 100
PHONE: ViewportSize = {"width": 390, "height": 844}


@dataclass
class Watch:
    """What a page did that it must not: errors, failed responses, and requests to another
    origin."""

    origin: str
    errors: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    failed: list[tuple[int, str]] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("pageerror", lambda err: self.errors.append(str(err)))
        page.on("console", self._console)
        page.on("request", self._request)
        page.on("response", self._response)

    def _console(self, message: ConsoleMessage) -> None:
        # A failed response is logged by the browser too: it is judged by its status below.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console.append(message.text)

    def _request(self, request: Request) -> None:
        if not request.url.startswith(self.origin + "/"):
            self.elsewhere.append(request.url)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append((response.status, response.url.removeprefix(self.origin)))

    def check(self, *allowed_statuses: int) -> None:
        """No page error, console error or request elsewhere; no failed response but those of
        the statuses the test provoked (refusals, the 404 pages it opened) and the verifier
        page's favicon (a static page of its own, without an icon)."""
        assert self.errors == []
        assert self.console == []
        assert self.elsewhere == []
        unexpected = [
            (status, path)
            for status, path in self.failed
            if status not in allowed_statuses and path != "/favicon.ico"
        ]
        assert unexpected == []


async def sign_in(page: Page, url: str, name: str) -> Watch:
    watch = Watch(url)
    watch.attach(page)
    await page.goto(f"{url}/play")
    await expect(page).to_have_url(f"{url}/play/signin")
    await page.get_by_label("Sign in as (development only)").fill(name)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page).to_have_url(f"{url}/play")
    await expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    return watch


async def new_tournament(
    http: httpx.AsyncClient, settings: Settings, name: str, **overrides: Any
) -> str:
    body = {
        "name": name,
        "handPauseMs": 0,
        "settings": {
            "seats": 3,
            "entryFee": ENTRY_FEE,
            "startingStack": 200,
            "actionTimeoutSeconds": 30,
            "blindStructure": {
                "startingSmallBlind": 10,
                "increaseFactor": 1.5,
                "levelDurationSeconds": 600,
            },
            **overrides,
        },
    }
    r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
    assert r.status_code == 201, r.text
    return str(r.json()["tournamentId"])


def fold_first_then_shove() -> Policy:
    """The first action of the tournament folds (a hand nobody shows down), then all-in."""
    folded = False

    def policy(legal: dict[str, Any]) -> tuple[str, int | None]:
        nonlocal folded
        if not folded and "fold" in legal["actions"]:
            folded = True
            return ("fold", None)
        return shove(legal)

    return policy


def tag() -> str:
    return uuid.uuid4().hex[:6]


async def test_the_lobby_lists_tournaments_and_rooms_with_live_counts(
    page: Page, play_url: str, play_settings: Settings, screenshots: Path
) -> None:
    me = f"ann-{tag()}"
    async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
        tid = await new_tournament(http, play_settings, f"Lobby cup {tag()}")
        room_id = await open_room(
            http, play_settings, name=f"Lobby room {tag()}", kind="human_only"
        )
        watch = await sign_in(page, play_url, me)

        card = page.locator(f"article[data-tournament-id='{tid}']")
        await expect(card.locator(".seats-taken")).to_have_text("0/3")
        await expect(card.locator(".entry")).to_have_text("100")
        await expect(card.locator(".kind")).to_have_text("Open to all")
        await expect(card.locator(".blinds")).to_contain_text("10/20, 15/30")
        await expect(card.locator(".blinds")).to_contain_text("…and it continues")
        await expect(card.locator(".payouts")).to_contain_text("3 players")
        await expect(card.locator(".entrants")).to_contain_text("none yet")
        room_card = page.locator(f"article[data-room-id='{room_id}']")
        await expect(room_card.locator(".kind")).to_have_text("People only")
        await expect(room_card.locator(".stakes")).to_have_text("5/10")
        await expect(room_card.locator(".seats-taken")).to_have_text("0/3")
        await expect(page.locator("#balance")).to_have_text("0")

        # Live counts: a registration and a join elsewhere show without a reload.
        await page.evaluate("window.__noReload = true")
        other = f"bob-{tag()}"
        await credit(http, play_settings, other, 5000)
        r = await http.post(
            f"/tournaments/{tid}/register", json={}, headers=player(play_settings, other)
        )
        assert r.status_code == 200, r.text
        r = await http.post(f"/rooms/{room_id}/join", json={}, headers=player(play_settings, other))
        assert r.status_code == 200, r.text
        await expect(card.locator(".seats-taken")).to_have_text("1/3", timeout=10_000)
        await expect(card.locator(".entrants")).to_contain_text(other)
        await expect(room_card.locator(".seats-taken")).to_have_text("1/3", timeout=10_000)
        assert await page.evaluate("window.__noReload === true")

        # The faucet (dev) changes the balance shown.
        await page.get_by_role("button", name="Get chips").click()
        await expect(page.locator("#balance")).to_have_text("10,000")
        assert await balance(http, play_settings, me) == 10_000

        # Leaderboard tabs and the activity feed render (their figures are the JSON routes').
        board = page.locator("#leaderboard")
        await expect(board.get_by_role("button", name="People")).to_have_attribute(
            "aria-pressed", "true"
        )
        await board.get_by_role("button", name="Everyone").click()
        await expect(board.get_by_role("button", name="Everyone")).to_have_attribute(
            "aria-pressed", "true"
        )
        await page.get_by_label("Ranked by").select_option("hands")
        await expect(page.locator("#board-rows tr, #board-empty:visible")).not_to_have_count(0)
        await expect(page.locator("#feed li, #feed-empty:visible")).not_to_have_count(0)
        await page.screenshot(path=screenshots / "play-lobby.png", full_page=True)

        # Filters: a plain GET form.
        await page.get_by_label("Show").select_option("rooms")
        await page.get_by_role("button", name="Filter").click()
        await expect(page).to_have_url(re.compile(r"/play\?kind=&venue=rooms&state=open$"))
        await expect(page.locator("article[data-tournament-id]")).to_have_count(0)
        await expect(room_card).to_be_visible()
        await page.get_by_label("Audience").select_option("agent")
        await page.get_by_role("button", name="Filter").click()
        await expect(page.locator(f"article[data-room-id='{room_id}']")).to_have_count(0)

        # The tournament's own page from its card, by keyboard.
        await page.goto(f"{play_url}/play")
        link = page.get_by_role("link", name=re.compile("^Lobby cup"))
        await link.first.focus()
        await page.keyboard.press("Enter")
        await expect(page).to_have_url(f"{play_url}/play/tournaments/{tid}")

        # An unknown tournament or room is a 404 page, not a 500.
        for path, heading in (
            ("/play/tournaments/t_nope", "No tournament t_nope"),
            ("/play/rooms/room_0000", "No room room_0000"),
            ("/play/tournaments/..%2F..", None),
        ):
            response = await page.goto(play_url + path)
            assert response is not None and response.status == 404, path
            if heading:
                await expect(page.get_by_role("heading", name=heading)).to_be_visible()
    watch.check(404)


async def test_register_pay_and_leave_by_clicking_with_each_refusal_as_a_sentence(
    browser: Browser, play_url: str, play_settings: Settings, screenshots: Path
) -> None:
    # At a phone's width: the whole flow must be usable there.
    context = await browser.new_context(viewport=PHONE)
    context.set_default_timeout(15_000)
    page = await context.new_page()
    me = f"cat-{tag()}"
    try:
        async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
            tid = await new_tournament(http, play_settings, f"Pay cup {tag()}")
            watch = await sign_in(page, play_url, me)
            await page.goto(f"{play_url}/play/tournaments/{tid}")
            await expect(page.locator("#my-status")).to_have_text("not registered")
            await expect(page.locator("#balance")).to_have_text("0")
            await expect(page.locator("#levels tbody tr")).not_to_have_count(0)
            await expect(page.locator("#payouts tbody tr")).not_to_have_count(0)

            await page.get_by_role("button", name="Register").click()
            await expect(page.locator("#notice")).to_contain_text("You are registered")
            await expect(page.locator("#my-status")).to_have_text("registered, not paid")
            await expect(page.locator("#entrants")).to_contain_text(me)

            # Paying with too little balance: the sentence, and nothing changes.
            await page.get_by_role("button", name="Pay 100 chips").click()
            refusal = page.locator("#refusal")
            await expect(refusal).to_have_text("Your balance is too low for this.")
            await expect(refusal).to_have_attribute("data-code", "insufficient_funds")
            await expect(page.locator("#my-status")).to_have_text("registered, not paid")
            await page.screenshot(path=screenshots / "play-refusal-phone.png", full_page=True)
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], width

            await page.get_by_role("button", name="Get chips").click()
            await expect(page.locator("#balance")).to_have_text("10,000")
            await page.get_by_role("button", name="Pay 100 chips").click()
            await expect(page.locator("#notice")).to_contain_text("Paid")
            await expect(page.locator("#my-status")).to_have_text("paid")
            await expect(page.locator("#balance")).to_have_text("9,900")
            assert await balance(http, play_settings, me) == 9_900

            await page.get_by_role("button", name="Leave and get a refund").click()
            await expect(page.locator("#notice")).to_contain_text("You left")
            await expect(page.locator("#my-status")).to_have_text("not registered")

            async def refunded() -> bool:
                return await balance(http, play_settings, me) == 10_000

            await eventually(refunded)
            await page.reload()
            await expect(page.locator("#balance")).to_have_text("10,000")

            # A stale page: registered elsewhere meanwhile (a first come-back has no
            # cooldown), the click shows the sentence and changes nothing.
            r = await http.post(
                f"/tournaments/{tid}/register", json={}, headers=player(play_settings, me)
            )
            assert r.status_code == 200, r.text
            await page.get_by_role("button", name="Register").click()
            await expect(refusal).to_have_text("You are already registered for this tournament.")
            await expect(refusal).to_have_attribute("data-code", "tournament_already_registered")

            # A CoPilot tournament asks for the advisor; one that is not the person's own agent
            # is refused with the seed's code, shown as its sentence.
            copilot = await new_tournament(
                http, play_settings, f"CoPilot cup {tag()}", kind="copilot"
            )
            await page.goto(f"{play_url}/play/tournaments/{copilot}")
            await expect(page.locator("#kind")).to_have_text("People with a CoPilot")
            await page.get_by_label("Advisor agent id").fill("agent_nobody")
            await page.get_by_role("button", name="Register").click()
            await expect(refusal).to_have_attribute("data-code", "advisor_required")
            await expect(refusal).to_have_text(re.compile("^A CoPilot table needs an advisor"))
            await expect(page.locator("#my-status")).to_have_text("not registered")

            # The lobby too fits a phone's width.
            await page.get_by_role("link", name="Lobby", exact=True).first.click()
            await expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
            await page.screenshot(path=screenshots / "play-lobby-phone.png", full_page=True)
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], width
        watch.check(409)
    finally:
        await context.close()


async def test_join_and_leave_a_cash_room_with_the_balance_shown(
    page: Page, play_url: str, play_settings: Settings, client: Client, screenshots: Path
) -> None:
    me = f"dee-{tag()}"
    async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
        room_id = await open_room(http, play_settings, name=f"Room {tag()}")
        await credit(http, play_settings, me, 3000)
        watch = await sign_in(page, play_url, me)
        await page.goto(f"{play_url}/play/rooms/{room_id}")
        await expect(page.locator("#stakes")).to_have_text("5/10")
        await expect(page.locator("#buy-in")).to_have_text("1,000 chips")
        await expect(page.locator("#balance")).to_have_text("3,000")
        seat = page.get_by_label(re.compile("^Seat"))
        await expect(seat).to_have_attribute("max", "3")
        # A seat taken meanwhile: the sentence, and no chip moves.
        other = f"gus-{tag()}"
        await credit(http, play_settings, other, 1000)
        r = await http.post(
            f"/rooms/{room_id}/join", json={"seat": 1}, headers=player(play_settings, other)
        )
        assert r.status_code == 200, r.text
        await seat.fill("1")
        await page.get_by_role("button", name="Join with 1,000 chips").click()
        refusal = page.locator("#refusal")
        await expect(refusal).to_have_attribute("data-code", "seat_taken")
        await expect(refusal).to_have_text(
            "That seat is taken: choose another, or leave the seat empty."
        )
        assert await balance(http, play_settings, me) == 3_000
        await seat.fill("2")
        await page.get_by_role("button", name="Join with 1,000 chips").click()
        await expect(page.locator("#notice")).to_contain_text("You have a seat")
        await expect(page.locator("#my-seat")).to_contain_text("Seat 2, stack 1,000")
        await expect(page.locator("#balance")).to_have_text("2,000")
        await expect(page.get_by_role("link", name="Take your seat")).to_have_attribute(
            "href", f"/play/rooms/{room_id}/table"
        )
        await page.screenshot(path=screenshots / "play-room.png", full_page=True)
        seats = {p["handle"]: p["seat"] for p in (await record(http, room_id))["players"]}
        assert seats == {f"@{other}": 1, f"@{me}": 2}

        # Two seated: a hand is running, so the leave waits for its end.
        await page.get_by_role("button", name="Leave the room").click()
        await expect(page.locator("#notice")).to_contain_text("You leave when this hand ends")
        await play(
            client,
            workflow_id(room_id),
            [me, other],
            passive,
            until=lambda view: me not in {s.player_id for s in view.seats},
        )

        async def gone() -> dict[str, Any] | None:
            rec = await record(http, room_id)
            return rec if f"@{me}" not in {p["handle"] for p in rec["players"]} else None

        rec = await eventually(gone, 30)
        # No rake in a room: every chip is the two balances or the other's stack.
        left_with = 3_000 + 1_000 - rec["players"][0]["stack"]
        assert await balance(http, play_settings, me) == left_with
        await page.goto(f"{play_url}/play/rooms/{room_id}")
        await expect(page.locator("#balance")).to_have_text(f"{left_with:,}")
        await expect(page.get_by_role("button", name="Join with 1,000 chips")).to_be_visible()
    watch.check(409)


async def test_a_finished_tournaments_results_and_a_hand_in_the_verifier(
    page: Page, play_url: str, play_settings: Settings, client: Client, screenshots: Path
) -> None:
    me, bot = f"eve-{tag()}", f"bot-{tag()}"
    name = f"Done cup {tag()}"
    async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
        tid = await new_tournament(http, play_settings, name, seats=2)
        for user in (me, bot):
            await credit(http, play_settings, user, 1000)
            for step, body in (("register", {}), ("pay", {"amount": ENTRY_FEE})):
                r = await http.post(
                    f"/tournaments/{tid}/{step}", json=body, headers=player(play_settings, user)
                )
                assert r.status_code == 200, r.text

        async def state(wanted: str) -> dict[str, Any] | None:
            body: dict[str, Any] = (await http.get(f"/tournaments/{tid}")).json()
            return body if body["state"] == wanted else None

        playing = await eventually(lambda: state("playing"), 30)
        watch = await sign_in(page, play_url, me)  # and stays in the lobby meanwhile
        await page.evaluate("window.__noReload = true")
        seat_page = await page.context.new_page()
        watch.attach(seat_page)
        await seat_page.goto(f"{play_url}/play/tournaments/{tid}")
        await expect(seat_page.get_by_role("link", name="Take your seat")).to_have_attribute(
            "href", f"/play/tournaments/{tid}/table"
        )
        await play(client, playing["tableWorkflowId"], [me, bot], fold_first_then_shove())
        closed = await eventually(lambda: state("closed"), 60)
        winner = next(p for p in closed["standings"] if p["rank"] == 1)["playerId"]
        paid = {p["playerId"]: p for p in closed["payouts"]}

        # The lobby's feed got the tournament's news live, without a reload.
        feed = page.locator("#feed")
        await expect(feed).to_contain_text(
            f"{winner} was paid {paid[winner]['amount']:,} for 1st place in tournament {tid[:8]}."
        )
        await expect(feed).to_contain_text(f"finished 2nd in tournament {tid[:8]}.")
        await expect(
            feed.get_by_role("link", name=f"tournament {tid[:8]}").first
        ).to_have_attribute("href", f"/play/tournaments/{tid}")
        # The balance shown follows the prize too.
        await expect(page.locator("#balance")).to_have_text(
            f"{await balance(http, play_settings, me):,}"
        )
        assert await page.evaluate("window.__noReload === true")
        await page.get_by_role("button", name="Everyone").click()
        # The board shows the service's top 20 as the API ranks them (other tests' players
        # share this database, so the person is not always among them), and the API ranks her.
        by = await page.locator("#board-by").input_value()
        top = (await http.get(f"/leaderboard?kind=all&by={by}&limit=20")).json()["entries"]
        rows = page.locator("#board-rows tr")
        await expect(rows).to_have_count(len(top))
        assert [await r.get_attribute("data-player-id") for r in await rows.all()] == [
            e["playerId"] for e in top
        ]
        everyone = (await http.get(f"/leaderboard?kind=all&by={by}&limit=500")).json()
        ranked = {e["playerId"] for e in everyone["entries"]}
        assert me in ranked or len(ranked) == 500
        await page.screenshot(path=screenshots / "play-lobby-after.png", full_page=True)

        await seat_page.reload()
        await expect(seat_page.get_by_role("link", name="Take your seat")).to_have_count(0)
        await seat_page.get_by_role("link", name="Results and hand histories").click()
        await expect(seat_page).to_have_url(f"{play_url}/play/tournaments/{tid}/results")
        await seat_page.close()

        await page.goto(f"{play_url}/play")
        await page.get_by_label("State").select_option("finished")
        await page.get_by_role("button", name="Filter").click()
        await page.get_by_role("link", name=f"Results of {name}").click()
        await expect(page).to_have_url(f"{play_url}/play/tournaments/{tid}/results")
        await expect(page.locator("#state")).to_have_text("closed")

        standings = page.locator("#standings tbody tr")
        await expect(standings).to_have_count(2)
        first = page.locator(f"#standings tr[data-player-id='{winner}']")
        await expect(first.locator(".rank")).to_have_text("1")
        await expect(first.locator(".prize")).to_have_text(f"{paid[winner]['amount']:,}")
        await expect(first.locator(".payout-status")).to_have_text("confirmed")

        hands = (await http.get(f"/tournaments/{tid}/hands")).json()
        await expect(page.locator("#hands tbody tr")).to_have_count(len(hands))
        mine = page.locator("#my-hands tbody tr")
        await expect(mine).to_have_count(len(hands))  # heads-up: every hand is mine
        for n in range(1, len(hands) + 1):
            # Each of my hands shows my own cards, as the hand history serves them to me.
            own = (
                await http.get(f"/tournaments/{tid}/hands/{n}", headers=player(play_settings, me))
            ).json()
            row = page.locator(f"#my-hands tr[data-hand='{n}']")
            await expect(row.locator("td.cardtext").first).to_have_text(
                " ".join(own["yourCards"]["cards"])
            )
        # Hand 1 was folded: nobody's cards were shown, mine are still mine to read.
        first_hand = (await http.get(f"/tournaments/{tid}/hands/1")).json()
        assert first_hand["holeCards"] == {} and first_hand["board"] == []
        await page.screenshot(path=screenshots / "play-results.png", full_page=True)

        await page.get_by_role("link", name="Verify hand 1").click()
        await expect(page).to_have_url(re.compile(r"/verify\?url="))
        await expect(page.locator("#result")).to_have_text(re.compile(r"^OK: hand 1:"))
    watch.check()


async def test_an_on_chain_entry_is_paid_from_the_wallet_page(
    page: Page, play_settings: Settings, worker: Worker
) -> None:
    """On an on-chain deployment the tournament page sends the person to the wallet page to
    pay (the permit is signed there), and offers no Pay button that would only be refused."""
    chain = play_settings.model_copy(update={"money_backend": "chain"})
    me = f"fay-{tag()}"
    async with serve_api(chain) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        tid = await new_tournament(http, chain, f"Chain cup {tag()}")
        watch = await sign_in(page, url, me)
        await page.goto(f"{url}/play/tournaments/{tid}")
        await page.get_by_role("button", name="Register").click()
        await expect(page.locator("#my-status")).to_have_text("registered, not paid")
        await expect(page.get_by_role("link", name="Pay with your wallet")).to_have_attribute(
            "href", f"/play/tournaments/{tid}/wallet"
        )
        await expect(page.get_by_role("button", name=re.compile("^Pay"))).to_have_count(0)
    watch.check()
