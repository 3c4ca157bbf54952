"""A person plays a CoPilot tournament from /play against bots (`sng demo --humans 1
--copilot NAME`'s flow): they choose the advisor the demo made for them, register and pay by
clicking, and at the table see the bundled advisor's suggestion beside the buttons on every
one of their turns, and decide themselves (here: they click what it suggests).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from pathlib import Path

import httpx
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, expect

from core.settings import Settings
from sdk.demo import run_demo
from tests.integration.helpers import credit
from tests.ui.test_play_lobby import sign_in

ADVICE = re.compile(r"^CoPilot suggests (Fold|Check|Call|Raise|All-in)\b")


async def _the_demo_page(capture: list[str]) -> str:
    for _ in range(300):
        found = next((w for w in " ".join(capture).split() if "/play/tournaments/" in w), "")
        if found:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"the demo never said where to go: {capture}")


async def test_a_copilot_player_sees_advice_on_every_turn_and_decides(
    page: Page,
    play_url: str,
    play_settings: Settings,
    screenshots: Path,
) -> None:
    me = f"cleo-{uuid.uuid4().hex[:6]}"
    said: list[str] = []

    class Stderr:
        def write(self, text: str) -> None:
            said.append(text)

        def flush(self) -> None:
            pass

    with contextlib.redirect_stderr(Stderr()):  # type: ignore[type-var]
        demo = asyncio.ensure_future(
            run_demo(
                play_url,
                play_settings,
                seats=3,
                humans=1,
                copilot=[me],
                stack=200,
                small_blind=25,
                level_seconds=30,
            )
        )
        try:
            url = await _the_demo_page(said)
            assert any(f"sign in as {me!r}" in line for line in said), said
            async with httpx.AsyncClient(base_url=play_url) as http:
                await credit(http, play_settings, me, 100)
            watch = await sign_in(page, play_url, me)
            await page.goto(url)
            advisor = page.get_by_label("Your advisor")
            await expect(advisor).to_contain_text(f"CoPilot for {me}")
            await page.get_by_role("button", name="Register").click()
            await page.get_by_role("button", name=re.compile(r"^Pay 100 chips")).click()
            await expect(page.locator("#my-status")).to_contain_text("paid")
            await page.goto(f"{url}/table")

            turns = 0
            seen: list[str] = []
            over = page.locator("#over")
            buttons = page.locator("#actions:not([hidden]) button:enabled")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 150
            while not await over.is_visible():
                if loop.time() > deadline:
                    # Twice in CI (CI-46, CI-53) against 15-36 s otherwise: say what was
                    # going on, for the next time.
                    await page.screenshot(path=screenshots / "play-table-copilot-timeout.png")
                    async with httpx.AsyncClient(base_url=play_url) as http:
                        row = (await http.get(url.replace("/play", "", 1))).text[:600]
                    raise AssertionError(
                        "the tournament did not end in time",
                        {
                            "turns": turns,
                            "seen": seen[-5:],
                            "buttons": await buttons.count(),
                            "tournament": row,
                            "demo": demo.done() and (demo.exception() or demo.result()),
                            "said": "".join(said)[-1500:],
                        },
                    )
                if not await buttons.count():
                    await page.wait_for_timeout(100)
                    continue
                # Our turn: the advice comes beside the buttons before we decide.
                box = page.locator("#advice")
                try:
                    await expect(box).to_have_text(ADVICE, timeout=10_000)
                except AssertionError:
                    if await over.is_visible() or not await buttons.count():
                        continue  # the turn ended (the hand, or the tournament) meanwhile
                    raise
                text = await box.inner_text()
                if not seen:
                    await page.screenshot(path=screenshots / "play-table-copilot.png")
                seen.append(text)
                suggested = ADVICE.match(text)
                assert suggested is not None
                with contextlib.suppress(PlaywrightError):
                    await page.get_by_role("button", name=suggested.group(1), exact=True).click(
                        timeout=2_000
                    )
                    turns += 1
                    await expect(box).not_to_have_text(text, timeout=10_000)
            assert turns >= 1, "the person never had a turn"
            assert len(seen) >= turns
            assert all("—" in line for line in seen), seen  # each with its reason
            result = await asyncio.wait_for(demo, 120)
            assert result["state"] == "closed"
            assert me in {s["player"] for s in result["standings"]}
            watch.check()
        finally:
            demo.cancel()
            with contextlib.suppress(BaseException):
                await demo
