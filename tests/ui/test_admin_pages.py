"""The admin pages end to end in headless Chromium: login, list and its refresh, create, force-end.

Each test saves screenshots (see the ``screenshots`` fixture) for a human to look at.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, expect
from temporalio.client import Client

from core.settings import Settings
from db import ledger
from db.engine import Database
from tests.integration.bots import play, shove
from tests.integration.helpers import admin, create, eventually
from tests.integration.test_tournament import create_fast, fill, until_state


async def login(page: Page, base: str, key: str) -> None:
    await page.goto(f"{base}/ui/tournaments")
    await expect(page).to_have_url(f"{base}/ui/login")
    await page.fill("#serviceKey", key)
    await page.click("button[type=submit]")
    await expect(page).to_have_url(f"{base}/ui/tournaments")


async def test_login_guards_every_page(
    page: Page, ui_url: str, ui_settings: Settings, screenshots: Path
) -> None:
    for path in ("/ui/tournaments", "/ui/tournaments/new", "/ui/tournaments/abc"):
        await page.goto(ui_url + path)
        await expect(page).to_have_url(f"{ui_url}/ui/login")
    await page.fill("#serviceKey", "not-the-key")
    await page.click("button[type=submit]")
    await expect(page.get_by_role("alert")).to_have_text("That is not the admin key.")
    await page.screenshot(path=screenshots / "login-refused.png", full_page=True)

    await page.fill("#serviceKey", ui_settings.key("admin"))
    await page.click("button[type=submit]")
    await expect(page.get_by_role("heading", name="Tournaments")).to_be_visible()
    (cookie,) = await page.context.cookies()
    assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == ("sng_admin", True, "Strict")
    assert ui_settings.key("admin") not in cookie["value"]

    # A POST without the page's form token is refused even with the session cookie.
    forged = await page.request.post(f"{ui_url}/ui/logout", form={"csrf": "x"})
    assert forged.status == 403
    # A tampered cookie is no session.
    bad = await page.request.get(
        f"{ui_url}/ui/tournaments",
        headers={"Cookie": f"sng_admin={cookie['value'][:-2]}00"},
        max_redirects=0,
    )
    assert (bad.status, bad.headers["location"]) == (303, "/ui/login")

    await page.get_by_role("button", name="Log out").click()
    await expect(page).to_have_url(f"{ui_url}/ui/login")
    await page.goto(f"{ui_url}/ui/tournaments")
    await expect(page).to_have_url(f"{ui_url}/ui/login")


async def test_list_renders_and_refreshes_to_show_a_state_change(
    page: Page, ui_url: str, ui_settings: Settings, screenshots: Path
) -> None:
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        tid = await create(http, ui_settings)
        await login(page, ui_url, ui_settings.key("admin"))
        row = page.locator(f"tr[data-tournament-id='{tid}']")
        await expect(row.locator(".state")).to_have_text("registering")
        await expect(row).to_contain_text("open")
        await expect(page.locator("#tournament-rows")).to_have_attribute(
            "hx-trigger", f"every {ui_settings.admin_refresh_seconds:g}s"
        )
        await page.screenshot(path=screenshots / "list.png", full_page=True)
        # A marker in the page's JS state survives only if the page is never reloaded.
        await page.evaluate("window.__noReload = true")

        r = await http.post(f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(ui_settings))
        assert r.status_code == 200, r.text

        await expect(row.locator(".state")).to_have_text("cancelled", timeout=15_000)
        assert await page.evaluate("window.__noReload === true")
        await page.screenshot(path=screenshots / "list-after-refresh.png", full_page=True)


async def test_create_through_the_form_with_messages_beside_fields(
    page: Page, ui_url: str, ui_settings: Settings, screenshots: Path
) -> None:
    await login(page, ui_url, ui_settings.key("admin"))
    await page.get_by_role("link", name="New tournament").first.click()
    await expect(page.locator("#blind-preview tbody tr")).to_have_count(10)

    # Live: the schema's message appears beside the field while typing.
    await page.fill("#in-seats", "11")
    await expect(page.locator("#err-seats")).to_have_text(
        "Input should be less than or equal to 10"
    )
    await expect(page.locator("#blind-preview")).to_have_count(0)
    # A cross-field rule names its field too.
    await page.fill("#in-seats", "3")
    await page.fill("#in-rakeFee", "100")
    await expect(page.locator("#err-rakeFee")).to_have_text("must be less than entryFee")
    await expect(page.locator("#err-seats")).to_have_text("")

    # Submitted anyway: the server refuses and puts the message beside the field.
    await page.click("#create-button")
    await expect(page.locator("#err-rakeFee")).to_have_text("must be less than entryFee")
    await expect(page).to_have_url(f"{ui_url}/ui/tournaments/new")
    await page.screenshot(path=screenshots / "create-refused.png", full_page=True)

    await page.fill("#in-name", "Browser-made")
    await page.fill("#in-rakeFee", "10")
    await page.fill("#in-blindStructure-increaseFactor", "2")
    await expect(page.locator("#err-rakeFee")).to_have_text("")
    # 3 seats × (100 − 10): the payout preview from the domain's own functions.
    await expect(page.locator("#payout-preview")).to_contain_text("270")
    await expect(page.locator("#blind-preview tbody tr").nth(2)).to_contain_text("40")
    await page.screenshot(path=screenshots / "create-preview.png", full_page=True)

    await page.click("#create-button")
    await expect(page).to_have_url(re.compile(rf"{ui_url}/ui/tournaments/[0-9a-f]{{32}}$"))
    tid = page.url.rsplit("/", 1)[-1]
    await expect(page.locator("#state")).to_have_text("registering")
    await expect(page.locator("#force-end-button")).to_have_count(0)
    await expect(page.locator("#force-end-unavailable")).to_be_visible()
    await expect(page.locator("#temporal-link")).to_have_attribute(
        "href",
        f"{ui_settings.temporal_ui_url}/namespaces/{ui_settings.temporal_namespace}"
        f"/workflows/tournament-{tid}",
    )
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        view = (await http.get(f"/tournaments/{tid}")).json()
    assert (view["name"], view["seats"], view["settings"]["rakeFee"]) == ("Browser-made", 3, 10)
    assert view["settings"]["blindStructure"]["increaseFactor"] == 2.0


async def test_force_end_from_the_page(
    page: Page, ui_url: str, ui_settings: Settings, client: Client, screenshots: Path
) -> None:
    users = [f"ui-fe-{i}" for i in range(3)]
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        tid = await create_fast(http, ui_settings, 3, stack=5000)
        await fill(http, ui_settings, tid, users)
        await until_state(http, tid, "playing")

        await login(page, ui_url, ui_settings.key("admin"))
        await page.goto(f"{ui_url}/ui/tournaments/{tid}")
        await expect(page.locator("#ladder tr.current")).to_contain_text("◀ current")
        await expect(page.locator("#entrants tbody tr")).to_have_count(3)

        # The button appears once the level is old enough (shortened for the test).
        async def button_shown() -> bool:
            await page.reload()
            return await page.locator("#force-end-button").count() == 1

        await eventually(button_shown, limit=15)
        await page.screenshot(path=screenshots / "force-end-offered.png", full_page=True)
        await page.check("input[name=confirm]")
        await page.click("#force-end-button")
        await expect(page).to_have_url(f"{ui_url}/ui/tournaments/{tid}")
        await expect(page.locator("#flash")).to_have_count(0)
        await expect(page.locator("#standings tbody tr")).to_have_count(3)

        final: dict[str, Any] = await until_state(http, tid, "closed")
        await page.reload()
        await expect(page.locator("#state")).to_have_text("closed")
        rows = page.locator("#payouts tbody tr")
        await expect(rows).to_have_count(len(final["payouts"]))
        await expect(rows.first).to_contain_text("confirmed")
        await expect(page.locator("#force-end-button")).to_have_count(0)
        await page.screenshot(path=screenshots / "force-ended-closed.png", full_page=True)
    assert sum(final["stacks"].values()) == 15000


async def test_api_refuses_force_end_while_the_level_is_young(
    api_url: str, settings: Settings
) -> None:
    """The API's own check, at the production threshold (5 minutes)."""
    assert settings.force_end_min_level_age_seconds == 300
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create_fast(http, settings, 2)
        await fill(http, settings, tid, ["young-0", "young-1"])
        await until_state(http, tid, "playing")
        r = await http.post(
            "/admin/force-end-tournament", json={"tableId": tid}, headers=admin(settings)
        )
        assert (r.status_code, r.json()["code"]) == (409, "invalid_state"), r.text
        assert "force-end needs 300s" in r.json()["message"]
        assert (await http.get(f"/tournaments/{tid}")).json()["state"] == "playing"


async def test_retry_refused_payouts_from_the_page(
    page: Page,
    ui_url: str,
    ui_settings: Settings,
    client: Client,
    db: Database,
    screenshots: Path,
) -> None:
    """A refused payout is shown with its reason and a retry button (security review: failed
    payouts had no way back)."""
    users = [f"ui-po-{uuid.uuid4().hex[:4]}-{i}" for i in range(2)]
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as http:
        tid = await create_fast(http, ui_settings, 2)
        await fill(http, ui_settings, tid, users)
        hold = f"test:ui-hold-{tid}"
        await ledger.transfer(
            db, key=f"drain-{tid}", source=ledger.escrow_account(tid), destination=hold, amount=200
        )
        await play(client, f"table-{tid}-1", users, shove, limit=240)
        await until_state(http, tid, "settling", limit=60)

        await login(page, ui_url, ui_settings.key("admin"))

        async def offered() -> bool:
            await page.goto(f"{ui_url}/ui/tournaments/{tid}")
            return await page.locator("#retry-payouts-button").count() == 1

        await eventually(offered, limit=20)
        await expect(page.locator("#payout-refused")).to_be_visible()
        await expect(page.locator("#payouts")).to_contain_text("failed")
        await page.screenshot(path=screenshots / "payout-refused.png", full_page=True)
        await ledger.transfer(
            db,
            key=f"restore-{tid}",
            source=hold,
            destination=ledger.escrow_account(tid),
            amount=200,
        )
        await page.click("#retry-payouts-button")
        await expect(page).to_have_url(f"{ui_url}/ui/tournaments/{tid}")
        await until_state(http, tid, "closed", limit=30)
        await page.reload()
        await expect(page.locator("#state")).to_have_text("closed")
        await expect(page.locator("#retry-payouts-button")).to_have_count(0)
