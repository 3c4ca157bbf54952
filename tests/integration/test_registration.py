"""Registration legs through HTTP: pay exactly the fee, leave with a refund, cancel, seal."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from sqlmodel import select
from temporalio.client import Client

from core.settings import Settings
from db import ledger
from db.engine import Database
from db.models import Event
from tests.integration.helpers import (
    SETTINGS,
    admin,
    balance,
    create,
    credit,
    eventually,
    player,
    start_paid_tournament,
)
from wire.messages import PayEntryInput
from workflows.tournament import TournamentWorkflow


async def register(
    http: httpx.AsyncClient, settings: Settings, tid: str, user: str
) -> httpx.Response:
    return await http.post(f"/tournaments/{tid}/register", json={}, headers=player(settings, user))


async def pay(
    http: httpx.AsyncClient, settings: Settings, tid: str, user: str, amount: int = 100
) -> httpx.Response:
    return await http.post(
        f"/tournaments/{tid}/pay", json={"amount": amount}, headers=player(settings, user)
    )


async def test_pay_exactly_the_fee_and_leave_with_a_refund(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        await credit(http, settings, "pay-alice", 1000)
        assert (await register(http, settings, tid, "pay-alice")).status_code == 200

        wrong = await pay(http, settings, tid, "pay-alice", 99)
        assert (wrong.status_code, wrong.json()["code"]) == (409, "tournament_entry_fee_mismatch")
        assert await balance(http, settings, "pay-alice") == 1000  # nothing moved

        ok = await pay(http, settings, tid, "pay-alice")
        assert (ok.status_code, ok.json()["status"]) == (200, "paid"), ok.text
        assert await balance(http, settings, "pay-alice") == 900
        assert await ledger.balance(db, ledger.escrow_account(tid)) == 100
        # A retry of a pay that went through (the answer was lost) gets the same answer and
        # moves nothing again.
        again = await pay(http, settings, tid, "pay-alice")
        assert (again.status_code, again.json()["status"]) == (200, "paid"), again.text
        assert await balance(http, settings, "pay-alice") == 900
        assert await ledger.balance(db, ledger.escrow_account(tid)) == 100

        left = await http.post(f"/tournaments/{tid}/leave", headers=player(settings, "pay-alice"))
        assert (left.status_code, left.json()["refunded"]) == (200, 100), left.text
        assert await balance(http, settings, "pay-alice") == 1000
        assert await ledger.balance(db, ledger.escrow_account(tid)) == 0

        # The same player may come back, and a second entry is keyed apart from the first.
        assert (await register(http, settings, tid, "pay-alice")).status_code == 200
        assert (await pay(http, settings, tid, "pay-alice")).status_code == 200
        assert await balance(http, settings, "pay-alice") == 900
    assert await ledger.total(db) == 0


async def test_insufficient_funds_moves_nothing_and_keeps_the_reserve(
    api_url: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        await credit(http, settings, "poor-bob", 50)
        assert (await register(http, settings, tid, "poor-bob")).status_code == 200
        r = await pay(http, settings, tid, "poor-bob")
        assert (r.status_code, r.json()["code"]) == (409, "insufficient_funds")
        assert await balance(http, settings, "poor-bob") == 50
        state = (await http.get(f"/tournaments/{tid}")).json()
        assert [(e["playerId"], e["status"]) for e in state["entrants"]] == [
            ("poor-bob", "reserved")
        ]


async def test_cancel_refunds_every_paid_entry(
    api_url: str, settings: Settings, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        for user in ("c1", "c2"):
            await credit(http, settings, f"cancel-{user}", 300)
            assert (await register(http, settings, tid, f"cancel-{user}")).status_code == 200
        assert (await pay(http, settings, tid, "cancel-c1")).status_code == 200
        r = await http.post(f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(settings))
        assert (r.status_code, r.json()["state"]) == (200, "cancelled"), r.text
        assert await balance(http, settings, "cancel-c1") == 300
        assert await ledger.balance(db, ledger.escrow_account(tid)) == 0
        again = await http.post(
            f"/admin/tournaments/{tid}/cancel", json={}, headers=admin(settings)
        )
        assert (again.status_code, again.json()["code"]) == (409, "invalid_state")
        late = await register(http, settings, tid, "cancel-late")
        assert late.json()["code"] == "tournament_not_in_registration"


async def test_last_seat_race_has_exactly_seats_winners(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings, seats=3)
        results = await asyncio.gather(
            *(register(http, settings, tid, f"race-{i}") for i in range(8))
        )
        codes = sorted(r.json().get("code", "ok") for r in results)
        assert codes.count("ok") == 3 and codes.count("tournament_full") == 5, codes
        state = (await http.get(f"/tournaments/{tid}")).json()
        assert state["registeredCount"] == 3


async def test_full_paid_field_seals_and_draws_seats(
    api_url: str, settings: Settings, db: Database, client: Client
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings, seats=3)
        users = [f"seal-{i}" for i in range(3)]
        for user in users:
            await credit(http, settings, user, 100)
            assert (await register(http, settings, tid, user)).status_code == 200
            assert (await pay(http, settings, tid, user)).status_code == 200

        async def started() -> dict | None:
            state = (await http.get(f"/tournaments/{tid}")).json()
            return state if state["state"] == "starting" else None

        state = await eventually(started)
        assert state["fieldSize"] == 3 and state["startsAtMs"] > 0
        assert sorted(e["seat"] for e in state["entrants"]) == [0, 1, 2]
        stand = await http.post(f"/tournaments/{tid}/leave", headers=player(settings, users[0]))
        assert stand.json()["code"] == "tournament_not_in_registration"

    async def events() -> list[Event]:
        async with db.session() as s:
            return list((await s.exec(select(Event).where(Event.tournament_id == tid))).all())

    logged = await eventually(events)
    assert [(e.type, e.payload["state"]) for e in logged] == [
        ("tournament_state_changed", "starting")
    ]
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 300


async def test_a_retried_pay_after_the_field_sealed_gets_its_answer(
    client: Client, worker: Any, db: Database, task_queue: str
) -> None:
    """The last payer's answer was lost and the field sealed meanwhile: the retry is the same
    answer at once (it used to wait for a registration loop that had ended)."""
    tid = f"retry-{uuid.uuid4().hex[:8]}"
    handle = await start_paid_tournament(client, db, task_queue, tid, SETTINGS, hand_pause_ms=0)

    async def playing() -> bool | None:
        return (
            True
            if (await handle.query(TournamentWorkflow.state)).state.value == "playing"
            else None
        )

    await eventually(playing, limit=20)
    again = await asyncio.wait_for(
        handle.execute_update(
            TournamentWorkflow.pay_entry, PayEntryInput(player_id=f"{tid}-2", amount=100)
        ),
        20,
    )
    assert again.status.value == "paid"
    await handle.terminate("test done")
