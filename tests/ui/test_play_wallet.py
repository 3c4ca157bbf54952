"""A person pays an on-chain entry from ``/play`` with a browser wallet (issue 29).

Headless Chromium drives ``/play/tournaments/{id}/wallet`` as a person would; the wallet
extension is ``tests/ui/wallet.py``'s injected EIP-1193 provider, which forwards to anvil's
unlocked accounts. So the whole path is real: the page builds the ERC-2612 permit's EIP-712
typed data and the wallet signs it, the API relays it only for a wallet the person bound by
signing a challenge, the worker checks the signature, and the vault pulls the entry; leaving
refunds it to the wallet, on chain.

Each anvil account can be bound to one account of the service: every test takes its own.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import ConsoleMessage, Page, Request, Response, expect
from temporalio.client import Client
from web3 import Web3

from activities.chain_support import TOKEN_NAME, chain_id_of
from core.settings import Settings
from core.tokens import mint_player_token
from db.engine import Database
from devtools.chain import ChainInfo, fund
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.conftest import serve_api
from tests.integration.helpers import admin, player
from tests.ui.wallet import InjectedWallet

ENTRY = 100
SETTINGS = {
    "seats": 3,
    "entryFee": ENTRY,
    "startingStack": 300,
    "actionTimeoutSeconds": 60,
    "blindStructure": {
        "startingSmallBlind": 10,
        "increaseFactor": 1.5,
        "levelDurationSeconds": 600,
    },
}


@dataclass
class OnChain:
    url: str
    settings: Settings
    chain: ChainInfo


@pytest.fixture
async def on_chain(
    settings: Settings,
    client: Client,
    db: Database,
    task_queue: str,
    chain: ChainInfo,  # noqa: F811
) -> AsyncIterator[OnChain]:
    """The API with the pages on the chain backend, and a worker paying through the vault."""
    from worker import build_worker

    configured = settings.model_copy(
        update={
            "money_backend": "chain",
            "chain_rpc_url": chain.rpc_url,
            "vault_address": chain.vault_address,
            "token_address": chain.token_address,
            "chain_id": chain.chain_id,
        }
    )
    async with build_worker(client, db, task_queue, chain=chain_activities(chain)):
        async with serve_api(configured) as url:
            yield OnChain(url, configured, chain)


class Watch:
    """Page errors, console errors and requests to any other origin, seen while a test runs.

    Chromium logs every API answer of 400 or more as a console error ("Failed to load
    resource"): those the test expects (a refusal it provokes) are named to
    :meth:`assert_clean`, and every other console error fails the test."""

    LOAD_FAILED = "Failed to load resource: the server responded with a status of"

    def __init__(self, page: Page, base: str) -> None:
        self.origin = urlsplit(base).netloc
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.paths: list[str] = []
        self.refused: list[str] = []
        page.on("pageerror", lambda err: self.errors.append(str(err)))
        page.on("console", self._console)
        page.on("request", self._request)
        page.on("response", self._response)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            path = urlsplit(response.url).path
            self.refused.append(f"{response.status} {response.request.method} {path}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} ({message.location.get('url')})")

    def _request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if parts.netloc != self.origin:
            self.foreign.append(request.url)
        self.paths.append(f"{request.method} {parts.path}")

    def assert_clean(self, *refusals: str) -> None:
        """No page error, no request elsewhere, and exactly these refused API calls."""
        assert self.refused == list(refusals)
        unexpected = [e for e in self.errors if not e.startswith(self.LOAD_FAILED)]
        assert unexpected == []
        assert len(self.errors) == len(refusals), self.errors
        assert self.foreign == []


def anvil_account(w3: Web3, chain: ChainInfo, index: int) -> str:  # noqa: F811
    """One of anvil's unlocked accounts (0 is the operator), with chips to pay with."""
    account = Web3.to_checksum_address(w3.eth.accounts[index])
    fund(w3, chain, account, 1_000)
    return account


async def new_tournament(base: str, settings: Settings) -> str:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        r = await http.post(
            "/admin/tournaments",
            json={"name": f"Wallet cup {uuid.uuid4().hex[:4]}", "settings": SETTINGS},
            headers=admin(settings),
        )
        assert r.status_code == 201, r.text
        return str(r.json()["tournamentId"])


async def entrant_status(base: str, tid: str, person: str) -> str | None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        r = await http.get(f"/tournaments/{tid}")
        assert r.status_code == 200, r.text
        assert r.json()["moneyBackend"] == "chain"
    return next((e["status"] for e in r.json()["entrants"] if e["playerId"] == person), None)


async def bind_by_api(base: str, headers: dict[str, str], rpc_url: str, account: str) -> None:
    """Bind an anvil account to another person's account, anvil signing the challenge."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        r = await http.post("/me/wallets/challenge", json={"address": account}, headers=headers)
        assert r.status_code == 200, r.text
        challenge = r.json()
        signed = await http.post(
            rpc_url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "personal_sign",
                "params": ["0x" + challenge["message"].encode().hex(), account],
            },
        )
        body = {"nonce": challenge["nonce"], "signature": signed.json()["result"]}
        r = await http.post("/me/wallets", json=body, headers=headers)
        assert r.status_code == 201, r.text


async def sign_in(page: Page, base: str, name: str) -> None:
    await page.goto(f"{base}/play/signin")
    await page.get_by_label("Sign in as (development only)").fill(name)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page).to_have_url(f"{base}/play")


async def test_the_permit_info_names_the_chain_the_token_and_the_vault(
    on_chain: OnChain,
) -> None:
    async with httpx.AsyncClient(base_url=on_chain.url, timeout=30) as http:
        # The page is a signed-in person's, and its id is a tournament id's shape.
        r = await http.get("/play/tournaments/t-1/wallet")
        assert (r.status_code, r.headers["location"]) == (303, "/play/signin")
        cookie = {"sng_player": mint_player_token(on_chain.settings, "wallet-x")}
        r = await http.get("/play/tournaments/t-1/wallet", cookies=cookie)
        assert r.status_code == 200 and 'data-tournament-id="t-1"' in r.text
        assert r.headers["content-security-policy"].startswith("default-src 'self'")
        r = await http.get("/play/tournaments/t%20%3Cx%3E/wallet", cookies=cookie)
        assert r.status_code == 404 and "No such tournament" in r.text and "<x>" not in r.text
        r = await http.get("/chain/permit-info")
    assert r.status_code == 200, r.text
    assert r.json() == {
        "chainId": on_chain.chain.chain_id,
        "tokenAddress": Web3.to_checksum_address(on_chain.chain.token_address),
        "tokenName": TOKEN_NAME,
        "tokenVersion": "1",
        "tokenDecimals": 0,
        "vaultAddress": Web3.to_checksum_address(on_chain.chain.vault_address),
    }


async def test_a_person_pays_an_onchain_entry_with_their_wallet_and_leaving_refunds_it(
    page: Page,
    on_chain: OnChain,
    chips: Chips,  # noqa: F811
    w3: Web3,  # noqa: F811
    screenshots: Path,
) -> None:
    base, chain_info = on_chain.url, on_chain.chain
    account = anvil_account(w3, chain_info, 1)
    before, vault_before = chips.balance(account), chips.balance(chain_info.vault_address)
    person = f"wallet-{uuid.uuid4().hex[:6]}"
    tid = await new_tournament(base, on_chain.settings)
    wallet = InjectedWallet(chain_info.rpc_url, account)
    await wallet.install(page)
    await sign_in(page, base, person)
    watch = Watch(page, base)  # this page's (the lobby asks for a /favicon.ico it lacks)
    await page.goto(f"{base}/play/tournaments/{tid}/wallet")
    await expect(page.get_by_role("heading", name="Pay with your wallet")).to_be_visible()
    await expect(page.get_by_role("link", name="Back to the tournament")).to_have_attribute(
        "href", f"/play/tournaments/{tid}"
    )
    await page.get_by_role("button", name="Connect wallet").click()
    await expect(page.locator("#wallet-address")).to_have_text(account)
    await expect(page.locator("#wallet-chain")).to_contain_text(str(chain_info.chain_id))
    await expect(page.locator("#wallet-chips")).to_have_text(f"{before:,} CHIP")

    # Bind the wallet to the person's account: the wallet signs the service's challenge.
    await page.get_by_role("button", name="Bind this wallet").click()
    await expect(page.locator("#wallet-bound")).to_have_text("Bound to your account")
    assert "personal_sign" in wallet.requests

    await page.get_by_role("button", name="Register").click()
    await expect(page.locator("#entry-status")).to_have_text("Registered: the entry is not paid")
    await page.get_by_role("button", name=f"Pay entry ({ENTRY} CHIP)").click()
    await expect(page.locator("#entry-status")).to_have_text("Paid")
    await expect(page.locator("#wallet-chips")).to_have_text(f"{before - ENTRY:,} CHIP")
    assert "eth_signTypedData_v4" in wallet.requests
    assert await entrant_status(base, tid, person) == "paid"
    assert chips.balance(account) == before - ENTRY
    assert chips.balance(chain_info.vault_address) == vault_before + ENTRY
    entry_id = chain_id_of(f"{tid}:entry:{person}:1")
    deposit = chips.vault.functions.entries(entry_id).call()
    assert (deposit[0], deposit[1], deposit[2], deposit[3]) == (
        chain_id_of(tid),
        account,
        ENTRY,
        0,
    )
    await page.screenshot(path=screenshots / "play-wallet-paid.png", full_page=True)

    # Leave: the entry goes back to the wallet that paid it, on chain.
    await page.get_by_role("button", name="Leave").click()
    refund = page.locator("#wallet-message")
    await expect(refund).to_contain_text(f"{ENTRY} CHIP refunded to {account}")
    await expect(page.locator("#entry-status")).to_have_text("No entry")
    await expect(page.locator("#wallet-chips")).to_have_text(f"{before:,} CHIP")
    assert chips.balance(account) == before
    assert chips.vault.functions.entries(entry_id).call()[3] == ENTRY
    await page.screenshot(path=screenshots / "play-wallet-refunded.png", full_page=True)
    await page.set_viewport_size({"width": 390, "height": 844})  # a phone
    await page.screenshot(path=screenshots / "play-wallet-phone.png", full_page=True)
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways
    watch.assert_clean()


async def test_a_wrong_chain_or_a_declined_signature_pays_nothing(
    page: Page,
    on_chain: OnChain,
    chips: Chips,  # noqa: F811
    w3: Web3,  # noqa: F811
    screenshots: Path,
) -> None:
    base, chain_info = on_chain.url, on_chain.chain
    account = anvil_account(w3, chain_info, 2)
    before = chips.balance(account)
    person = f"wallet-{uuid.uuid4().hex[:6]}"
    tid = await new_tournament(base, on_chain.settings)
    wallet = InjectedWallet(chain_info.rpc_url, account)
    wallet.chain_id = 1  # the wallet is on Ethereum's main chain
    await wallet.install(page)
    await sign_in(page, base, person)
    watch = Watch(page, base)  # this page's (the lobby asks for a /favicon.ico it lacks)
    await page.goto(f"{base}/play/tournaments/{tid}/wallet")
    await page.get_by_role("button", name="Connect wallet").click()
    alert = page.locator("#wallet-refusal")
    await expect(alert).to_have_attribute("role", "alert")
    await expect(alert).to_have_text(
        f"Your wallet is on chain 1, but entries here are paid on chain {chain_info.chain_id}:"
        " switch networks in your wallet."
    )
    await expect(page.get_by_role("button", name="Bind this wallet")).to_be_hidden()
    await expect(page.get_by_role("button", name=re.compile("Pay entry"))).to_be_hidden()
    await page.screenshot(path=screenshots / "play-wallet-wrong-chain.png", full_page=True)

    # The person switches networks: the wallet tells the page, which carries on.
    wallet.chain_id = None
    await page.evaluate(f"window.__sngWalletEmit('chainChanged', '{hex(chain_info.chain_id)}')")
    await expect(alert).to_be_hidden()

    # Someone else's account holds this wallet: the service's refusal, as a sentence.
    other = player(on_chain.settings, f"other-{uuid.uuid4().hex[:6]}")
    await bind_by_api(base, other, chain_info.rpc_url, account)
    bind = page.get_by_role("button", name="Bind this wallet")
    await bind.click()
    await expect(alert).to_contain_text("That wallet belongs to another account")
    await expect(page.locator("#wallet-bound")).to_have_text("Not bound to your account yet")
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        r = await http.delete(f"/me/wallets/{account}", headers=other)
        assert r.status_code == 204, r.text
    await bind.click()
    await expect(page.locator("#wallet-bound")).to_have_text("Bound to your account")
    await expect(alert).to_be_hidden()
    # From here on by keyboard: each step's button takes the focus when the last one is done.
    register = page.get_by_role("button", name="Register")
    await expect(register).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("#entry-status")).to_have_text("Registered: the entry is not paid")
    pay = page.get_by_role("button", name=f"Pay entry ({ENTRY} CHIP)")
    await expect(pay).to_be_focused()

    # They decline the permit in the wallet: a sentence, and nothing is sent.
    wallet.declines.add("eth_signTypedData_v4")
    await page.keyboard.press("Enter")
    await expect(alert).to_have_text("You declined the signature in your wallet: nothing was paid.")
    await page.screenshot(path=screenshots / "play-wallet-declined.png", full_page=True)
    assert f"POST /tournaments/{tid}/pay" not in watch.paths
    assert await entrant_status(base, tid, person) == "reserved"
    assert chips.balance(account) == before

    # They change their mind: the same button pays.
    wallet.declines.clear()
    await expect(pay).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("#entry-status")).to_have_text("Paid")
    await expect(alert).to_be_hidden()
    assert chips.balance(account) == before - ENTRY
    watch.assert_clean("409 POST /me/wallets")
