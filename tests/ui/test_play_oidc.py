"""Signing in on /play with an identity provider (api/play/oidc.py), against a real one.

The IdP is panva's certified ``oidc-provider`` (devtools/oidc-idp, installed by bin/check's
``npm ci``), with its own development login and consent pages, one client (PKCE required) and
one test account. It answers at ``localhost`` while the API is at ``127.0.0.1``: two sites, so
the browser treats the IdP's redirect back as the cross-site navigation it is in production.
Skipped locally only when node is missing (CI has it).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
from playwright.async_api import ConsoleMessage, Page, Route, expect
from pydantic import SecretStr
from temporalio.worker import Worker

from api.play.oidc import FLOW_COOKIE
from api.play.session import COOKIE
from core.settings import Settings, oidc_problems
from devtools.devstack import free_port
from tests.conftest import serve_api

IDP_DIR = Path(__file__).resolve().parents[2] / "devtools" / "oidc-idp"
NODE = shutil.which("node")
if NODE is None and not os.environ.get("CI"):
    pytest.skip("node is missing, so the test IdP cannot run (CI has it)", allow_module_level=True)

CLIENT_ID = "sng-play-test"
PROVIDER = "Test IdP"
LOGIN = "ada"


@dataclass
class Stack:
    api: str
    idp: str
    settings: Settings


@asynccontextmanager
async def running(
    settings: Settings, logs: Path, *, idp_secret: str = "", api_secret: str = ""
) -> AsyncIterator[Stack]:
    """The test IdP and the API configured for it (a public client unless given secrets)."""
    assert NODE is not None, "node is missing (CI must have it)"
    if not (IDP_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("devtools/oidc-idp/node_modules is missing: npm ci --prefix devtools/oidc-idp")
    port = free_port()
    idp = f"http://localhost:{port}"
    configured = settings.model_copy(
        update={
            "jwt_issuer": idp,
            "jwt_jwks_url": f"{idp}/jwks",
            "jwt_audience": CLIENT_ID,
            "oidc_client_id": CLIENT_ID,
            "oidc_client_secret": SecretStr(api_secret),
            "oidc_provider_name": PROVIDER,
        }
    )
    assert oidc_problems(configured) == []
    async with serve_api(configured) as api:
        log_path = logs / f"idp-{port}.log"
        log = log_path.open("wb")
        proc = await asyncio.create_subprocess_exec(
            NODE,
            str(IDP_DIR / "idp.mjs"),
            *("--port", str(port), "--issuer", idp, "--redirect-uri", f"{api}/play/oidc/callback"),
            *("--client-id", CLIENT_ID, "--client-secret", idp_secret, "--login", LOGIN),
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
            assert line.startswith(b"ready"), (line, log_path.read_text())
            yield Stack(api, idp, configured)
        finally:
            proc.terminate()
            await proc.wait()
            log.close()


@pytest.fixture
async def oidc_stack(settings: Settings, worker: Worker, tmp_path: Path) -> AsyncIterator[Stack]:
    async with running(settings, tmp_path) as stack:
        yield stack


async def watch(page: Page, stack: Stack) -> tuple[list[str], list[str]]:
    """Our pages' errors (page errors, console errors) and their requests to a third host.

    The IdP's own development pages ask Google for a font: that is the IdP's business, but
    the test lets no request leave the two hosts under test.
    """
    errors: list[str] = []
    elsewhere: list[str] = []

    def ours(url: str) -> bool:
        return url.startswith(stack.api + "/")

    page.on("pageerror", lambda err: errors.append(str(err)))

    def console(msg: ConsoleMessage) -> None:
        where = msg.location.get("url", "") or page.url
        # Chromium logs the refused callback's own 400 as an error: that status is the point.
        refusal = where.startswith(stack.api + "/play/oidc/callback?") and msg.text.startswith(
            "Failed to load resource: the server responded with a status of 400"
        )
        if msg.type == "error" and ours(where) and not refusal:
            errors.append(f"{where}: {msg.text}")

    page.on("console", console)

    async def outside(route: Route) -> None:
        if ours(route.request.frame.url):
            elsewhere.append(route.request.url)
        await route.abort()

    await page.route(lambda url: not url.startswith((stack.api + "/", stack.idp + "/")), outside)
    return errors, elsewhere


async def session_cookies(page: Page) -> set[str]:
    return {cookie["name"] for cookie in await page.context.cookies()}


async def at_the_idp_login(page: Page, stack: Stack) -> None:
    await page.goto(stack.api + "/play/signin")
    await page.get_by_role("link", name=f"Sign in with {PROVIDER}").click()
    await expect(page.get_by_placeholder("Enter any login")).to_be_visible()
    assert page.url.startswith(stack.idp + "/interaction/"), page.url


async def log_in_and_consent(page: Page) -> None:
    await page.get_by_placeholder("Enter any login").fill(LOGIN)
    await page.get_by_placeholder("and password").fill("any password will do")
    await page.get_by_role("button", name="Sign-in").click()
    await page.get_by_role("button", name="Continue").click()


async def caught_callback(page: Page, stack: Stack) -> str:
    """Sign in at the IdP by clicking, but hold its answer: the callback URL it would send the
    browser to (a real code and this browser's state), not followed.

    The IdP's consent answers with redirects (consent -> /auth/<uid> -> our callback), and
    Playwright routes no request reached by a redirect; so the consent POST is routed and
    its redirects are read here instead of followed by the browser.
    """
    caught: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def hold(route: Route) -> None:
        if route.request.method != "POST" or "prompt=consent" not in (
            route.request.post_data or ""
        ):
            await route.continue_()
            return
        consented = await route.fetch(max_redirects=0)
        resume = urljoin(route.request.url, consented.headers["location"])
        answer = await page.request.get(resume, max_redirects=0)
        caught.set_result(answer.headers["location"])
        await route.fulfill(status=204)

    await at_the_idp_login(page, stack)
    await page.get_by_placeholder("Enter any login").fill(LOGIN)
    await page.get_by_placeholder("and password").fill("any password will do")
    await page.get_by_role("button", name="Sign-in").click()
    await page.route(f"{stack.idp}/interaction/**", hold)
    await page.get_by_role("button", name="Continue").click()
    url = await asyncio.wait_for(caught, timeout=15)
    await page.unroute(f"{stack.idp}/interaction/**", hold)
    assert url.startswith(f"{stack.api}/play/oidc/callback?"), url
    assert parse_qs(urlsplit(url).query)["code"], url
    return url


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    query.update(changes)
    return parts._replace(query=urlencode(query)).geturl()


async def refused(page: Page, url: str, sentence: str) -> None:
    response = await page.goto(url)
    assert response is not None and response.status == 400, response and response.status
    await expect(page.get_by_role("alert")).to_contain_text(sentence)
    assert COOKIE not in await session_cookies(page)


async def test_sign_in_with_the_identity_provider(
    page: Page, oidc_stack: Stack, screenshots: Path
) -> None:
    stack = oidc_stack
    errors, elsewhere = await watch(page, stack)
    await page.goto(stack.api + "/play/signin")
    await page.screenshot(path=screenshots / "play-signin-oidc.png", full_page=True)
    # The IdP's button comes first; the token paste and the dev sign-in stay.
    link = page.get_by_role("link", name=f"Sign in with {PROVIDER}")
    # First in the focus order of the form; the name field follows it.
    await link.focus()
    await page.keyboard.press("Tab")
    await expect(page.get_by_label("Sign in as (development only)")).to_be_focused()
    await expect(page.get_by_label("Your player token")).to_be_visible()
    await link.click()
    await expect(page.get_by_placeholder("Enter any login")).to_be_visible()
    assert page.url.startswith(stack.idp + "/interaction/"), page.url
    await page.screenshot(path=screenshots / "play-oidc-idp-login.png", full_page=True)
    await log_in_and_consent(page)

    await expect(page).to_have_url(stack.api + "/play")
    await page.screenshot(path=screenshots / "play-oidc-signed-in.png", full_page=True)
    balance = await page.evaluate("fetch('/me/balance').then(r => r.json())")
    assert balance["accountId"] == f"user:{LOGIN}", balance
    cookies = await session_cookies(page)
    assert COOKIE in cookies and FLOW_COOKIE not in cookies, cookies
    assert errors == [] and elsewhere == [], (errors, elsewhere)


async def test_a_forged_or_foreign_answer_signs_no_one_in(
    page: Page, oidc_stack: Stack, screenshots: Path
) -> None:
    stack = oidc_stack
    errors, elsewhere = await watch(page, stack)
    genuine = await caught_callback(page, stack)
    # A real code with another state: refused, and this browser's own flow stays usable.
    await refused(
        page,
        with_query(genuine, state="forged-state"),
        f"That answer from {PROVIDER} does not belong to the sign-in this browser started",
    )
    await page.screenshot(path=screenshots / "play-oidc-forged-state.png", full_page=True)
    # This browser's state with a code the IdP never issued: the exchange is refused.
    await refused(
        page,
        with_query(genuine, code="made-up-code"),
        f"{PROVIDER} refused to complete the sign-in (invalid_grant)",
    )
    # The flow is spent once its own state came back, and its cookie deleted: the genuine
    # answer now reaches a browser without the flow cookie.
    assert FLOW_COOKIE not in await session_cookies(page)
    await refused(page, genuine, "This browser has no sign-in under way")

    # Signed out at the IdP (with its session it would answer at once, without a login
    # page), a new flow: after a forged answer, its own genuine one still signs in.
    await page.context.clear_cookies()
    genuine = await caught_callback(page, stack)
    await refused(page, with_query(genuine, state="forged-state"), "does not belong")
    await page.goto(genuine)
    await expect(page).to_have_url(stack.api + "/play")
    balance = await page.evaluate("fetch('/me/balance').then(r => r.json())")
    assert balance["accountId"] == f"user:{LOGIN}", balance
    assert errors == [] and elsewhere == [], (errors, elsewhere)


async def test_cancelling_at_the_identity_provider(
    page: Page, oidc_stack: Stack, screenshots: Path
) -> None:
    stack = oidc_stack
    errors, elsewhere = await watch(page, stack)
    await at_the_idp_login(page, stack)
    async with page.expect_response(f"{stack.api}/play/oidc/callback*") as answer:
        await page.get_by_role("link", name="[ Cancel ]").click()
    response = await answer.value
    assert response.status == 400
    assert parse_qs(urlsplit(response.url).query)["error"] == ["access_denied"]
    await expect(page.get_by_role("alert")).to_have_text(
        f"You did not allow signing in at {PROVIDER}: nothing was changed."
    )
    await page.screenshot(path=screenshots / "play-oidc-cancelled.png", full_page=True)
    assert await session_cookies(page) & {COOKIE, FLOW_COOKIE} == set()
    assert errors == [] and elsewhere == [], (errors, elsewhere)


async def test_a_confidential_client_sends_its_secret(
    page: Page, settings: Settings, worker: Worker, tmp_path: Path
) -> None:
    # The IdP knows the client by its secret (HTTP Basic at the token endpoint) as well as PKCE.
    async with running(settings, tmp_path, idp_secret="s3cret", api_secret="s3cret") as stack:
        await at_the_idp_login(page, stack)
        await log_in_and_consent(page)
        await expect(page).to_have_url(stack.api + "/play")
        balance = await page.evaluate("fetch('/me/balance').then(r => r.json())")
        assert balance["accountId"] == f"user:{LOGIN}", balance
    await page.context.clear_cookies()
    # A wrong secret: the IdP refuses the exchange, and no one is signed in.
    async with running(settings, tmp_path, idp_secret="s3cret", api_secret="wrong") as stack:
        await at_the_idp_login(page, stack)
        await page.get_by_placeholder("Enter any login").fill(LOGIN)
        await page.get_by_placeholder("and password").fill("any password will do")
        await page.get_by_role("button", name="Sign-in").click()
        async with page.expect_response(f"{stack.api}/play/oidc/callback*") as answer:
            await page.get_by_role("button", name="Continue").click()
        assert (await answer.value).status == 400
        await expect(page.get_by_role("alert")).to_have_text(
            f"{PROVIDER} refused to complete the sign-in (invalid_client): start again."
        )
        assert COOKIE not in await session_cookies(page)
