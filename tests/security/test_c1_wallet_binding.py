"""C1 (security review), the wallet side: the service relayed a permit for any owner a caller
named.

A permit is not tied to a tournament or an account: whoever holds one the victim signed (a
leaked request, a phishing page, a log) could pay their own seat from the victim's wallet
through our API. Now an account first binds a wallet by signing a single-use EIP-4361
challenge (``POST /me/wallets/challenge`` then ``POST /me/wallets``), and ``/pay`` relays a
permit only for a wallet bound to the caller (``403 wallet_not_bound``, nothing sent).

On anvil with the real vault, the real API and a worker on the chain backend.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.messages import encode_defunct
from temporalio.client import Client

from core.settings import Settings
from db.engine import Database
from devtools.chain import ChainInfo, Wallet
from tests.api.support import agent_headers, new_agent
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.conftest import serve_api
from tests.integration.helpers import admin, player

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


@pytest.fixture
async def chain_api(
    settings: Settings,
    client: Client,
    db: Database,
    task_queue: str,
    chain: ChainInfo,  # noqa: F811
) -> AsyncIterator[tuple[str, Settings]]:
    """The API on the chain backend, with a worker whose money legs go through the vault."""
    from worker import build_worker

    on_chain = settings.model_copy(
        update={
            "money_backend": "chain",
            "chain_rpc_url": chain.rpc_url,
            "vault_address": chain.vault_address,
            "token_address": chain.token_address,
            "chain_id": chain.chain_id,
        }
    )
    async with build_worker(client, db, task_queue, chain=chain_activities(chain)):
        async with serve_api(on_chain) as url:
            yield url, on_chain


def _sign(wallet: Wallet, message: str) -> str:
    signed = Account.sign_message(encode_defunct(text=message), private_key=wallet.key)
    return "0x" + bytes(signed.signature).hex()


async def _bind(http: httpx.AsyncClient, headers: dict[str, str], wallet: Wallet) -> httpx.Response:
    r = await http.post("/me/wallets/challenge", json={"address": wallet.address}, headers=headers)
    assert r.status_code == 200, r.text
    challenge = r.json()
    assert wallet.address in challenge["message"] and challenge["nonce"] in challenge["message"]
    body = {"nonce": challenge["nonce"], "signature": _sign(wallet, challenge["message"])}
    return await http.post("/me/wallets", json=body, headers=headers)


async def _tournament(http: httpx.AsyncClient, settings: Settings, *users: dict[str, str]) -> str:
    r = await http.post(
        "/admin/tournaments",
        json={"name": "c1-bind", "settings": SETTINGS},
        headers=admin(settings),
    )
    assert r.status_code == 201, r.text
    tid = str(r.json()["tournamentId"])
    for headers in users:
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=headers)
        assert r.status_code == 200, r.text
    return tid


async def _status(http: httpx.AsyncClient, tid: str, player_id: str) -> str:
    r = await http.get(f"/tournaments/{tid}")
    assert r.status_code == 200, r.text
    return next(str(e["status"]) for e in r.json()["entrants"] if e["playerId"] == player_id)


async def test_a_leaked_permit_cannot_pay_someone_elses_seat(
    chain_api: tuple[str, Settings],
    chips: Chips,  # noqa: F811
) -> None:
    url, settings = chain_api
    victim = chips.new_wallet(1_000)
    attacker, owner = (f"c1b-{n}-{uuid.uuid4().hex[:6]}" for n in ("attacker", "victim"))
    as_attacker, as_victim = player(settings, attacker), player(settings, owner)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        tid = await _tournament(http, settings, as_attacker, as_victim)
        # A permit the victim really signed for the vault, in the attacker's hands.
        leaked: dict[str, Any] = chips.permit(victim, ENTRY)
        r = await http.post(
            f"/tournaments/{tid}/pay",
            json={"amount": ENTRY, "permit": leaked},
            headers=as_attacker,
        )
        assert r.status_code == 403, r.text
        assert r.json()["code"] == "wallet_not_bound" and r.json()["field"] == "permit.owner"
        assert chips.balance(victim.address) == 1_000
        assert await _status(http, tid, attacker) == "reserved"
        # The attacker cannot bind the victim's wallet without the victim's key.
        r = await http.post(
            "/me/wallets/challenge", json={"address": victim.address}, headers=as_attacker
        )
        forged = {"nonce": r.json()["nonce"], "signature": _sign(chips.new_wallet(0), "x")}
        r = await http.post("/me/wallets", json=forged, headers=as_attacker)
        assert r.status_code == 422 and r.json()["code"] == "wallet_challenge_invalid", r.text
        # The victim binds it and pays with the same permit: it is theirs.
        r = await _bind(http, as_victim, victim)
        assert r.status_code == 201 and r.json()["address"] == victim.address, r.text
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": ENTRY, "permit": leaked}, headers=as_victim
        )
        assert r.status_code == 200, r.text
        assert chips.balance(victim.address) == 1_000 - ENTRY
        assert await _status(http, tid, owner) == "paid"


async def test_a_challenge_is_spent_once_and_a_wallet_binds_to_one_account(
    chain_api: tuple[str, Settings],
    chips: Chips,  # noqa: F811
) -> None:
    url, settings = chain_api
    wallet = chips.new_wallet(0)
    alice, bob = (player(settings, f"c1c-{n}-{uuid.uuid4().hex[:6]}") for n in "ab")
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        r = await http.post(
            "/me/wallets/challenge", json={"address": wallet.address}, headers=alice
        )
        challenge = r.json()
        body = {"nonce": challenge["nonce"], "signature": _sign(wallet, challenge["message"])}
        # Someone else's challenge is not yours to spend.
        r = await http.post("/me/wallets", json=body, headers=bob)
        assert r.status_code == 422 and r.json()["field"] == "nonce", r.text
        r = await http.post("/me/wallets", json=body, headers=alice)
        assert r.status_code == 201, r.text
        r = await http.post("/me/wallets", json=body, headers=alice)  # replayed
        assert r.status_code == 422 and r.json()["code"] == "wallet_challenge_invalid", r.text
        r = await _bind(http, bob, wallet)
        assert r.status_code == 409 and r.json()["code"] == "wallet_bound_elsewhere", r.text
        r = await http.get("/me/wallets", headers=alice)
        assert [w["address"] for w in r.json()] == [wallet.address]
        assert (await http.get("/me/wallets", headers=bob)).json() == []
        # Malformed input is a coded 422, never a 500.
        for bad in ({"address": "0x12"}, {"address": "0x" + "zz" * 20}, {}):
            r = await http.post("/me/wallets/challenge", json=bad, headers=alice)
            assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
        r = await http.post(
            "/me/wallets", json={"nonce": "a" * 32, "signature": "0x00"}, headers=alice
        )
        assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
        r = await http.delete(f"/me/wallets/{wallet.address}", headers=alice)
        assert r.status_code == 204, r.text
        assert (await _bind(http, bob, wallet)).status_code == 201


async def test_an_agent_pays_with_a_wallet_bound_to_its_owner(
    chain_api: tuple[str, Settings],
    chips: Chips,  # noqa: F811
) -> None:
    """An agent's entry is its owner's money on every path: the wallet is bound to the owner's
    account, by the owner or by the agent holding the wallet's key."""
    url, settings = chain_api
    wallet, foreign = chips.new_wallet(1_000), chips.new_wallet(1_000)
    owner, stranger = (f"c1a-{n}-{uuid.uuid4().hex[:6]}" for n in ("owner", "stranger"))
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        agent = await new_agent(http, settings, owner)
        as_agent = agent_headers(str(agent["key"]))
        tid = await _tournament(http, settings, as_agent)
        # A wallet bound to someone else's account does not pay for this agent.
        assert (await _bind(http, player(settings, stranger), foreign)).status_code == 201
        r = await http.post(
            f"/tournaments/{tid}/pay",
            json={"amount": ENTRY, "permit": chips.permit(foreign, ENTRY)},
            headers=as_agent,
        )
        assert r.status_code == 403 and r.json()["code"] == "wallet_not_bound", r.text
        # The agent proves it holds the wallet: bound to its owner's account.
        assert (await _bind(http, as_agent, wallet)).status_code == 201
        listed = (await http.get("/me/wallets", headers=player(settings, owner))).json()
        assert [w["address"] for w in listed] == [wallet.address]
        r = await http.post(
            f"/tournaments/{tid}/pay",
            json={"amount": ENTRY, "permit": chips.permit(wallet, ENTRY)},
            headers=as_agent,
        )
        assert r.status_code == 200, r.text
        assert chips.balance(wallet.address) == 1_000 - ENTRY
        assert chips.balance(foreign.address) == 1_000
