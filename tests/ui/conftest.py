"""The admin pages in a real headless Chromium: Debian's package driven by Playwright.

Never ``playwright install``: the browser is the system's /usr/bin/chromium. Without it the
tests skip locally; in CI (``CI`` set) they run and fail loudly instead, and ``.ci/run``
installs the package first.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.worker import Worker

from core.settings import Settings
from tests.conftest import serve_api

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Shorter than production so a test sees them happen: the list's refresh (10 s) and the
# force-end rule's level age (5 min). The rule itself is the same code.
REFRESH_SECONDS = 1.0
FORCE_END_AFTER_SECONDS = 3

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip(
        f"{CHROMIUM} is missing: apt-get install -y chromium (CI installs it and never skips)",
        allow_module_level=True,
    )


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests save their screenshots: $SNG_UI_SCREENSHOTS, else a temporary dir."""
    chosen = os.environ.get("SNG_UI_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[object]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        await chromium.close()


@pytest.fixture
async def page(browser: object) -> AsyncIterator[object]:
    """A fresh browser context (no cookies) and one page in it."""
    from playwright.async_api import Browser

    assert isinstance(browser, Browser)
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = await context.new_page()
    yield page
    await context.close()


@pytest.fixture
def ui_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "admin_refresh_seconds": REFRESH_SECONDS,
            "force_end_min_level_age_seconds": FORCE_END_AFTER_SECONDS,
        }
    )


@pytest.fixture
async def ui_url(ui_settings: Settings, worker: Worker) -> AsyncIterator[str]:
    """The API with the pages, like ``api_url`` but with the shortened intervals above."""
    async with serve_api(ui_settings) as url:
        yield url


@pytest.fixture
def play_settings(ui_settings: Settings) -> Settings:
    """The UI tests' settings in dev mode: the faucet ("Get chips") answers only there."""
    return ui_settings.model_copy(update={"env": "dev"})


@pytest.fixture
async def play_url(play_settings: Settings, worker: Worker) -> AsyncIterator[str]:
    """The players' pages' API, with ``play_settings``."""
    async with serve_api(play_settings) as url:
        yield url
