"""H1 (security review): one malformed permit froze an on-chain tournament.

Out-of-range permit fields (a deadline of 2**256, v = 300, a 33-byte r, non-hex s) made web3
raise while the vault call was built; the activity retried that forever while ``pay_entry``
held the tournament's lock, so nobody could register, pay, leave or be cancelled. Now the API
refuses such a permit with a coded 422 naming the field, whatever the money backend, and the
chain activity turns any encoding error into a non-retryable ``validation_error``.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from sng.chain import ChainInfo
from sng.settings import Settings
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.integration.helpers import create, credit, player
from workflows.messages import MoneyMove, Permit

GOOD = {
    "owner": "0x" + "ab" * 20, "spender": "0x" + "cd" * 20, "value": 100, "deadline": 2**40,
    "v": 27, "r": "0x" + "11" * 32, "s": "0x" + "22" * 32,
}  # fmt: skip
MALFORMED = [
    ("deadline", 2**256),
    ("value", 2**256),
    ("v", 300),
    ("r", "0x" + "11" * 33),
    ("s", "0xnothex" + "0" * 58),
    ("owner", "0x" + "ab" * 19),
    ("owner", "a" * 1_900_000),
    ("value", "100"),
]


@pytest.mark.parametrize(
    ("field", "bad"), MALFORMED, ids=[f"{f}-{i}" for i, (f, _) in enumerate(MALFORMED)]
)
async def test_a_malformed_permit_is_a_coded_refusal_and_the_tournament_goes_on(
    api_url: str, settings: Settings, worker: Worker, field: str, bad: Any
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        attacker, other = (f"h1-{n}-{uuid.uuid4().hex[:6]}" for n in "ao")
        for user in (attacker, other):
            await credit(http, settings, user, 1_000)
            r = await http.post(
                f"/tournaments/{tid}/register", json={}, headers=player(settings, user)
            )
            assert r.status_code == 200, r.text
        permit = {**GOOD, field: bad}
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100, "permit": permit},
            headers=player(settings, attacker),
        )  # fmt: skip
        assert r.status_code == 422, r.text
        assert r.json()["code"] == "validation_error" and field in r.json()["field"], r.text
        # Nothing is held: the other entrant pays at once, and the attacker still can.
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, other)
        )
        assert r.status_code == 200, r.text
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, attacker)
        )
        assert r.status_code == 200, r.text


async def test_the_chain_activity_refuses_what_it_cannot_encode_for_good(
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    """Behind the API (an input recorded before the checks): no retry can encode it, so the
    activity's refusal is final instead of a retry loop."""
    acts = chain_activities(chain)
    wallet = chips.new_wallet(1_000)
    permit = Permit.model_construct(
        **{**GOOD, "owner": wallet.address, "spender": chain.vault_address, "deadline": 2**256}
    )
    move = MoneyMove.model_construct(
        key=f"t-h1:entry:{wallet.address}:1", tournament_id="t-h1", player_id=wallet.address,
        amount=100, permit=permit, wallet=wallet.address,
    )  # fmt: skip
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.collect_entry, move)
    assert info.value.type == "validation_error" and info.value.non_retryable
    assert chips.balance(wallet.address) == 1_000
