"""A multi-table tournament on the pages (issue 31, "Surfaces"), in headless Chromium: the
operator's tables, transit, moves and late registration; a person who registers late from
the lobby by clicking and follows their table, the field's numbers and a move to the final
table; a busted player who re-enters from the page, and a stale re-entry's sentence.

One small MTT serves every assertion (CI is at its time limit): twelve bots on three tables
of five, scheduled so that the field seals at once and late registration stays open. The bots
act through Temporal Updates on the tables the tournament publishes; the person only clicks.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Browser, Page, expect
from temporalio.client import (
    Client,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from core.settings import Settings
from tests.integration.bots import raise_if_cancelling
from tests.integration.helpers import credit, eventually, player
from tests.ui.test_admin_pages import login
from tests.ui.test_play_lobby import ENTRY_FEE, new_tournament, sign_in, tag
from wire.table_messages import ActInput, TableView
from workflows.table import TableWorkflow

WHY = {
    "balance": "to balance the tables",
    "break": "because your table broke",
    "final": "for the final table",
}
"""How the table page says why a player was moved (``player_moved``'s ``reason``)."""
SEATS = 5
EARLY = 12
"""Bots in the field when it seals: three tables of four."""


class TableBots:
    """Act for whoever is to act at the MTT's running tables. ``mode``: ``quiet`` (check or
    fold: nobody busts); ``shove`` (all-in, or call one: players bust fast), which turns
    quiet by itself once one table seats everyone left (the final table), so that table
    keeps its players for the pages; or ``bubble``: one table at a time shoves and an all-in
    is called heads-up only, so at most one player busts per hand (the field walks onto the
    bubble instead of jumping past it), and turns quiet by itself once the tables seat
    ``bubble_at`` players with chips, so the field stays on the bubble for the pages (a
    test that turned them quiet when a page showed hand-for-hand was too late once: the
    round's hand already had its all-in, and the bubble burst before the admin page loaded).
    ``careful`` players always check or fold."""

    def __init__(self, client: Client, http: httpx.AsyncClient, tid: str) -> None:
        self.client, self.http, self.tid = client, http, tid
        self.mode = "quiet"
        self.careful: set[str] = set()
        self.bubble_at = 0

    async def tables(self) -> list[str]:
        return list(((await record(self.http, self.tid)).get("mtt") or {}).get("tables", {}))

    async def view(self, table_id: str, viewer: str | None = None) -> TableView | None:
        table = self.client.get_workflow_handle_for(TableWorkflow.run, table_id)
        try:
            return await table.query(TableWorkflow.view, viewer)
        except RPCError as err:
            if err.status not in (RPCStatusCode.NOT_FOUND, RPCStatusCode.DEADLINE_EXCEEDED):
                raise
            return None

    async def act_at(self, table_id: str, view: TableView, *, hot: bool = True) -> bool:
        hand = view.hand
        if not hand or hand.get("over") or hand.get("actor") is None:
            return False
        actor = next(s.player_id for s in view.seats if s.seat == hand["actor"])
        mine = await self.view(table_id, actor)
        legal = mine.hand.get("legal") if mine is not None and mine.hand else None
        if mine is None or not legal:
            return False
        actions = legal["actions"]
        players = mine.hand["players"]
        in_hand = sum(1 for p in players if not p["folded"])
        if self.mode == "shove" and actor not in self.careful:
            action = next(a for a in ("all_in", "call", "check", "fold") if a in actions)
        elif self.mode == "bubble" and hot and actor not in self.careful:
            facing_all_in = any(p["all_in"] for p in players)
            shove = ("call" if in_hand == 2 else "fold") if facing_all_in else "all_in"
            action = next(a for a in (shove, "check", "fold") if a in actions)
        else:
            action = "check" if "check" in actions else "fold"
        table = self.client.get_workflow_handle_for(TableWorkflow.run, table_id)
        try:
            await table.execute_update(
                TableWorkflow.act,
                ActInput(
                    player_id=actor, hand_no=mine.hand_no, turn=mine.hand["turn"], action=action
                ),
            )
        except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError):
            # The test stops the bots: swallowing the cancel kept them playing and the test
            # waiting for them for ever.
            raise_if_cancelling()
            return False  # the hand moved on: read again
        return True

    async def run(self) -> None:
        while True:
            acted = False
            # The tables' own views, not the tournament's published one: that is written
            # with each hand's record, before the boundary that formed the final table.
            views = {t: await self.view(t) for t in await self.tables()}
            if self.mode == "shove" and sum(1 for v in views.values() if v and v.seats) == 1:
                self.mode = "quiet"
            alive = sum(1 for v in views.values() if v for s in v.seats if s.stack > 0)
            if self.mode == "bubble" and alive <= self.bubble_at:
                self.mode = "quiet"
            hot = next(
                (
                    t
                    for t, v in sorted(views.items())
                    if v is not None
                    and sum(1 for s in v.seats if s.stack > 0 and s.player_id not in self.careful)
                    >= 2
                ),
                None,
            )
            for table_id, view in views.items():
                if view is not None:
                    acted = await self.act_at(table_id, view, hot=table_id == hot) or acted
            if not acted:
                await asyncio.sleep(0.05)


async def record(http: httpx.AsyncClient, tid: str) -> dict[str, Any]:
    body: dict[str, Any] = (await http.get(f"/tournaments/{tid}")).json()
    return body


async def enter_and_play(
    http: httpx.AsyncClient, settings: Settings, tid: str, users: list[str]
) -> None:
    """Each user credited, registered and paid over the API; returns once the MTT plays."""
    for user in users:
        await credit(http, settings, user, ENTRY_FEE)
        for step, body in (("register", {}), ("pay", {"amount": ENTRY_FEE})):
            r = await http.post(
                f"/tournaments/{tid}/{step}", json=body, headers=player(settings, user)
            )
            assert r.status_code == 200, r.text

    async def playing() -> dict[str, Any] | None:
        body = await record(http, tid)
        return body if body["state"] == "playing" and body.get("mtt") else None

    await eventually(playing, 30)


async def closed(http: httpx.AsyncClient, tid: str) -> bool:
    """Settled to the end: a test leaves no money step in flight when its worker stops."""
    return (await record(http, tid))["state"] == "closed"


async def test_an_mtt_on_the_admin_and_players_pages(
    browser: Browser,
    page: Page,
    play_url: str,
    play_settings: Settings,
    client: Client,
    screenshots: Path,
) -> None:
    me = f"ann-{tag()}"
    name = f"MTT cup {tag()}"
    bots = [f"mb{i}-{tag()}" for i in range(EARLY)]
    async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
        tid = await new_tournament(
            http,
            play_settings,
            name,
            seats=SEATS,
            maxEntrants=20,
            minEntrants=EARLY,
            # Sealed as soon as the twelfth has paid (the start time has passed by then).
            scheduledStartAt=int(time.time() * 1000) + 1_000,
            lateRegistrationSeconds=240,
            maxReEntries=1,
            # 70 % of 14 paid: exact ICM over 14 players is past the work limit (an
            # estimate); over the final table's few it is exact again.
            payoutStructure={"paidPlacesPercent": 70},
        )
        await enter_and_play(http, play_settings, tid, bots)

        # -- the operator sees three tables of four, nobody moving, late registration open.
        operator = await browser.new_context(viewport={"width": 1280, "height": 900})
        operator.set_default_timeout(15_000)
        admin_page = await operator.new_page()
        await login(admin_page, play_url, play_settings.key("admin"))
        await admin_page.goto(f"{play_url}/ui/tournaments/{tid}")
        tables = admin_page.locator("#mtt")
        await expect(tables.get_by_role("heading", name="Tables")).to_be_visible()
        for n in (1, 2, 3):
            grid = admin_page.get_by_role("table", name=re.compile(f"^Table {n}"))
            await expect(grid.locator("tbody tr")).to_have_count(4)
            await expect(grid).to_contain_text("200")
        # Each table deals its first hand: one button each.
        await expect(admin_page.locator("#mtt .dealer")).to_have_count(3)
        await expect(admin_page.locator("#late-state")).to_have_text("open")
        await expect(admin_page.locator("#late-entries")).to_have_text("12")
        await expect(admin_page.locator("#late-re-entries")).to_have_text("0")
        await expect(admin_page.locator("#no-transit")).to_be_visible()
        await expect(admin_page.locator("#no-moves")).to_be_visible()

        # -- the person finds it in the lobby while it plays, and registers late by clicking.
        watch = await sign_in(page, play_url, me)
        card = page.locator(f"article[data-tournament-id='{tid}']")
        await expect(card.locator(".late")).to_contain_text("Late registration until")
        await expect(card.locator(".seats-taken")).to_have_text("12/20")
        await expect(card.locator(".state")).to_have_text("playing")
        await page.screenshot(path=screenshots / "mtt-lobby.png", full_page=True)
        await card.get_by_role("link", name=f"Register late for {name}").click()
        await expect(page).to_have_url(f"{play_url}/play/tournaments/{tid}")
        await expect(page.locator("#late-notice")).to_contain_text("re-enter 1 time")
        await page.get_by_role("button", name="Get chips").click()
        await expect(page.locator("#balance")).to_have_text("10,000")
        await page.get_by_role("button", name="Register late").click()
        await expect(page.locator("#my-status")).to_have_text("registered, not paid")
        await page.get_by_role("button", name="Pay 100 chips").click()
        await expect(page.locator("#notice")).to_contain_text("you are dealt in")
        await page.get_by_role("link", name="Take your seat").click()
        await expect(page).to_have_url(f"{play_url}/play/tournaments/{tid}/table")

        # Every table waits on its first decision: the late entry waits in transit for its
        # table's boundary, and the operator sees it there.
        await expect(page.locator("#mtt-table")).to_have_text("moving…")
        await expect(page.locator("#my-stack")).to_contain_text("moving to another table")
        await admin_page.reload()
        await expect(admin_page.locator("#in-transit")).to_contain_text(me)
        # The tournament's view names the table the entry goes to (and it is where it sits).
        transit = admin_page.locator(f"#in-transit li[data-player-id='{me}']")
        await expect(transit).to_contain_text(re.compile(r", to table [123]$"))
        going_to = int((await transit.inner_text()).rsplit(" ", 1)[-1])
        await expect(admin_page.locator("#late-entries")).to_have_text("13")

        # A second late entrant (over the API) goes to another table than the person's, so
        # one of the two is not at table 1 and must move before the final table deals.
        bea = f"bea-{tag()}"
        await credit(http, play_settings, bea, ENTRY_FEE)
        for step, body in (("register", {}), ("pay", {"amount": ENTRY_FEE})):
            r = await http.post(
                f"/tournaments/{tid}/{step}", json=body, headers=player(play_settings, bea)
            )
            assert r.status_code == 200, r.text
        second = await browser.new_context(viewport={"width": 1280, "height": 900})
        second.set_default_timeout(15_000)
        bea_page = await second.new_page()
        bea_watch = await sign_in(bea_page, play_url, bea)
        await bea_page.goto(f"{play_url}/play/tournaments/{tid}/table")
        pages = {me: page, bea: bea_page}

        table_bots = TableBots(client, http, tid)
        table_bots.careful.update(pages)
        runner = asyncio.create_task(table_bots.run())
        try:
            # Seated at the boundary: the table, the field's numbers, the ICM estimate.
            await expect(page.locator("#mtt-table")).to_have_text(
                re.compile(r"^[123]$"), timeout=30_000
            )
            seated_at = int(await page.locator("#mtt-table").inner_text())
            assert seated_at == going_to
            await expect(page.locator("#table-number")).to_have_text(f"Table {seated_at}")
            await expect(page.locator("#mtt-left")).to_have_text("14")
            await expect(page.locator("#mtt-average")).to_have_text("200")
            await expect(page.locator("#mtt-place")).to_have_text(re.compile(r"^\d+ of 14$"))
            # The page says what the person's game state says (the API's numbers).
            state = (
                await http.get(f"/tournaments/{tid}/game-state", headers=player(play_settings, me))
            ).json()["mtt"]
            assert state["playersLeft"] == 14 and not state["icmExact"], state
            await expect(page.locator("#mtt-paid")).to_have_text(str(state["paidPlaces"]))
            await expect(page.locator("#mtt-bubble")).to_have_text(
                f"{state['placesToTheMoney']} busts"
            )
            await expect(page.locator("#mv-icm")).to_contain_text("(est.)")
            await expect(page.locator("#mtt-late")).to_contain_text("Late registration is open")
            await page.screenshot(path=screenshots / "mtt-table-seated.png", full_page=True)
            await admin_page.reload()
            await expect(
                admin_page.get_by_role("table", name=re.compile(f"^Table {seated_at}"))
            ).to_contain_text(me)
            await expect(admin_page.locator("#no-transit")).to_be_visible()

            # Players bust until the field fits one table: every move is announced, the
            # person's own as a notice.
            table_bots.mode = "shove"

            async def final_table() -> dict[str, Any] | None:
                body = await record(http, tid)
                return body if body["mtt"]["finalTable"] else None

            formed = await eventually(final_table, 90)
            log = (await http.get(f"/tournaments/{tid}/events.json?limit=500")).json()["events"]
            last_move = {
                e["data"]["playerId"]: e["data"] for e in log if e["type"] == "player_moved"
            }
            # A final-table redraw that leaves a player in the seat they had moves nobody.
            assert set(last_move) & set(pages), "neither late entrant moved"
            for person, their_page in pages.items():
                move = last_move.get(person)
                notice = their_page.locator("#moved")
                if move is None:
                    await expect(notice).to_be_hidden()
                    continue
                to, seat = move["toTable"], move["seat"] + 1
                said = (
                    f"You were reseated at table {to}, seat {seat}"
                    if move["fromTable"] == to
                    else f"You moved from table {move['fromTable']} to table {to}, seat {seat}"
                )
                await expect(their_page.get_by_role("status").filter(has_text=said)).to_have_text(
                    f"{said} {WHY[move['reason']]}."
                )
            await expect(page.locator("#mtt-table")).to_have_text("1")
            await expect(page.locator("#mv-icm")).not_to_contain_text("(est.)")
            left = sum(1 for chips in formed["stacks"].values() if chips > 0)
            await expect(page.locator("#mtt-left")).to_have_text(str(left), timeout=10_000)
            await page.screenshot(path=screenshots / "mtt-table-moved.png", full_page=True)

            await admin_page.reload()
            moves = admin_page.locator("#moves")
            await expect(moves.locator("tr[data-type='final_table']")).to_have_count(1)
            await expect(moves.locator("tr[data-type='table_broken']")).not_to_have_count(0)
            for person, move in last_move.items():
                if person in pages:
                    await expect(moves).to_contain_text(
                        f"{person} moved from table {move['fromTable']} to table {move['toTable']}"
                    )
            await expect(
                admin_page.get_by_role("table", name=re.compile("^Table 1"))
            ).to_contain_text(me)
            await expect(admin_page.locator("#final-table")).to_be_visible()

            # -- a busted bot re-enters from the page; another's stale page shows the sentence.
            busted = [p for p, chips in formed["stacks"].items() if chips == 0]
            assert len(busted) >= 2, formed["stacks"]
            again, stale = busted[0], busted[1]
            guest = await browser.new_context(viewport={"width": 1280, "height": 900})
            guest.set_default_timeout(15_000)
            try:
                bust_page = await guest.new_page()
                bust_watch = await sign_in(bust_page, play_url, again)
                await bust_page.goto(f"{play_url}/play/tournaments/{tid}")
                await expect(bust_page.locator("#my-status")).to_have_text("out")
                await bust_page.get_by_role("button", name="Get chips").click()
                await bust_page.get_by_role("button", name="Re-enter").click()
                await expect(bust_page.locator("#notice")).to_contain_text("a new entry")
                # The page the re-entry reloads shows the new entry at once (read-your-writes,
                # docs/read-model.md): no reload.
                await bust_page.get_by_role("button", name="Pay 100 chips").click()
                await expect(bust_page.locator("#notice")).to_contain_text("you are dealt in")
                await expect(bust_page.get_by_role("link", name="Take your seat")).to_be_visible()
                await bust_page.screenshot(path=screenshots / "mtt-re-entered.png", full_page=True)

                # A stale page: the re-entry was made elsewhere meanwhile.
                await bust_page.context.clear_cookies()
                await sign_in(bust_page, play_url, stale)
                await bust_page.goto(f"{play_url}/play/tournaments/{tid}")
                await expect(bust_page.get_by_role("button", name="Re-enter")).to_be_visible()
                r = await http.post(
                    f"/tournaments/{tid}/register", json={}, headers=player(play_settings, stale)
                )
                assert r.status_code == 200, r.text
                await bust_page.get_by_role("button", name="Re-enter").click()
                refusal = bust_page.locator("#refusal")
                await expect(refusal).to_have_attribute(
                    "data-code", "tournament_already_registered"
                )
                await expect(refusal).to_have_text(
                    "You are already registered for this tournament."
                )
                bust_watch.check(409)
            finally:
                await guest.close()

            await admin_page.reload()
            await expect(admin_page.locator("#late-entries")).to_have_text("15")
            await expect(admin_page.locator("#late-re-entries")).to_have_text("1")
            await admin_page.screenshot(path=screenshots / "mtt-admin.png", full_page=True)
            # The MTT's part alone (docs/images/mtt-admin.png): the tables down to the moves.
            top = await admin_page.locator("#mtt").bounding_box()
            bottom = await admin_page.get_by_role(
                "heading", name="Entrants and seats"
            ).bounding_box()
            assert top is not None and bottom is not None
            await admin_page.screenshot(
                path=screenshots / "mtt-admin-tables.png",
                full_page=True,
                clip={"x": 0, "y": top["y"] - 16, "width": 1280, "height": bottom["y"] - top["y"]},
            )

            # -- the operator ends it; late registration closes and the lobby drops it.
            await admin_page.get_by_label("I have checked that this table is stuck").check()
            # The form's answer comes once every table has stopped: seconds on a loaded machine.
            await admin_page.get_by_role("button", name="Force-end tournament").click(
                timeout=60_000
            )

            await expect(page.locator("#over")).to_be_visible(timeout=20_000)
            await eventually(lambda: closed(http, tid), 60)
            await page.goto(f"{play_url}/play")
            await expect(page.locator(f"article[data-tournament-id='{tid}']")).to_have_count(0)
        finally:
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner
            await operator.close()
            await second.close()
    watch.check()
    bea_watch.check()


async def test_hand_for_hand_on_the_bubble_on_both_pages(
    page: Page,
    browser: Browser,
    play_url: str,
    play_settings: Settings,
    client: Client,
    screenshots: Path,
) -> None:
    """Six on two tables of three, half the field paid: with four left on two tables the
    next bust changes who is paid, and both pages say hand-for-hand."""
    me = f"hal-{tag()}"
    bots = [f"hb{i}-{tag()}" for i in range(5)]
    async with httpx.AsyncClient(base_url=play_url, timeout=30) as http:
        tid = await new_tournament(
            http,
            play_settings,
            f"Bubble cup {tag()}",
            maxEntrants=6,
            payoutStructure={"paidPlacesPercent": 50},
        )
        await enter_and_play(http, play_settings, tid, [me, *bots])
        watch = await sign_in(page, play_url, me)
        await page.goto(f"{play_url}/play/tournaments/{tid}/table")
        await expect(page.locator("#mtt-paid")).to_have_text("3")
        await expect(page.locator("#hand-for-hand")).to_be_hidden()

        table_bots = TableBots(client, http, tid)
        table_bots.careful.add(me)
        table_bots.mode = "bubble"
        table_bots.bubble_at = 4  # three are paid: the next bust is the bubble
        runner = asyncio.create_task(table_bots.run())
        try:
            notice = page.get_by_text("Hand-for-hand: every table plays one hand at a time")
            await expect(notice).to_be_visible(timeout=90_000)
            table_bots.mode = "quiet"
            await expect(page.locator("#mtt-left")).to_have_text("4")
            await expect(page.locator("#mtt-bubble")).to_have_text("1 bust")
            await page.screenshot(path=screenshots / "mtt-hand-for-hand.png", full_page=True)

            operator = await browser.new_context(viewport={"width": 1280, "height": 900})
            operator.set_default_timeout(15_000)
            try:
                admin_page = await operator.new_page()
                await login(admin_page, play_url, play_settings.key("admin"))
                await admin_page.goto(f"{play_url}/ui/tournaments/{tid}")
                await expect(admin_page.locator("#hand-for-hand")).to_be_visible()
                for n in (1, 2):
                    caption = admin_page.get_by_role("table", name=re.compile(f"^Table {n}"))
                    # Each table says whether it deals the round's hand or waits for it.
                    await expect(caption.locator("caption")).to_contain_text(
                        re.compile(
                            "hand-for-hand: (dealing the round's hand|waiting for the round)"
                        )
                    )
                await expect(admin_page.locator("#moves")).to_contain_text(
                    "Hand-for-hand began with 4 players left"
                )
                await expect(admin_page.locator("#late-state")).to_have_text(
                    "This tournament has no late registration."
                )
                await admin_page.screenshot(
                    path=screenshots / "mtt-admin-hand-for-hand.png", full_page=True
                )
            finally:
                await operator.close()
        finally:
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        # Done with it: end it rather than leave it dealing (an operator's force-end).
        r = await http.post(
            "/admin/force-end-tournament",
            json={"tableId": tid},
            headers={"X-Service-Key": play_settings.key("admin")},
        )
        assert r.status_code == 200, r.text
        await eventually(lambda: closed(http, tid), 60)
    watch.check()
