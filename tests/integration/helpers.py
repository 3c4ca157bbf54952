"""Small shared helpers for the integration tests (HTTP headers, polling, tournament bodies)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import (
    HandleQueryInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from core.settings import Settings
from core.tokens import mint_player_token
from db import ledger
from db.engine import Database
from wire.messages import (
    CreateTournamentInput,
    PayEntryInput,
    RegisterInput,
    TournamentView,
)
from workflows.tournament import TournamentWorkflow

T = TypeVar("T")

SETTINGS: dict[str, Any] = {
    "seats": 3,
    "entryFee": 100,
    "startingStack": 1500,
    "blindStructure": {"startingSmallBlind": 10, "increaseFactor": 1.5, "levelDurationSeconds": 60},
    "actionTimeoutSeconds": 10,
}


def heads_up(*, action_timeout_seconds: int = 300, stack: int = 1000) -> dict[str, Any]:
    """A two-seat tournament that waits for its players: 10/20 blinds for ten minutes and
    ``action_timeout_seconds`` to act."""
    return {
        "seats": 2,
        "entryFee": 10,
        "startingStack": stack,
        "actionTimeoutSeconds": action_timeout_seconds,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }


def admin(settings: Settings) -> dict[str, str]:
    return {"X-Service-Key": settings.key("admin")}


def player(settings: Settings, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_player_token(settings, user)}"}


async def eventually(check: Callable[[], Awaitable[T | None]], limit: float = 10.0) -> T:
    deadline = asyncio.get_running_loop().time() + limit
    while True:
        result = await check()
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)


async def create(http: httpx.AsyncClient, settings: Settings, **overrides: Any) -> str:
    body = {"name": "test", "settings": {**SETTINGS, **overrides}}
    r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
    assert r.status_code == 201, r.text
    return str(r.json()["tournamentId"])


async def credit(http: httpx.AsyncClient, settings: Settings, user: str, amount: int) -> None:
    r = await http.post(
        "/admin/ledger/credit",
        json={"userId": user, "amount": amount, "idempotencyKey": f"test-{user}-{amount}"},
        headers=admin(settings),
    )
    assert r.status_code == 200, r.text


async def balance(http: httpx.AsyncClient, settings: Settings, user: str) -> int:
    r = await http.get("/me/balance", headers=player(settings, user))
    assert r.status_code == 200, r.text
    return int(r.json()["balance"])


async def start_paid_tournament(
    client: Client,
    db: Database,
    task_queue: str,
    tid: str,
    settings: dict[str, Any],
    *,
    hand_pause_ms: int,
    **options: Any,
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    """A tournament whose every seat is registered and paid from a freshly credited ledger
    account, straight through the workflow's Updates (so it seals and plays). ``options``
    are further CreateTournamentInput fields."""
    handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid,
            name=tid,
            settings=settings,
            hand_pause_ms=hand_pause_ms,
            **options,
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    fee = int(settings["entryFee"])
    for i in range(int(settings["seats"])):
        await enter_paid(db, handle, f"{tid}-{i}", fee)
    return handle


async def enter_paid(
    db: Database, handle: WorkflowHandle[TournamentWorkflow, TournamentView], user: str, fee: int
) -> None:
    """``user`` funded with the fee from the mint, registered and paid (virtual money)."""
    await ledger.transfer(
        db,
        key=f"seed-{user}",
        source=ledger.MINT,
        destination=ledger.user_account(user),
        amount=fee,
    )
    await handle.execute_update(
        TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
    )
    await handle.execute_update(
        TournamentWorkflow.pay_entry, PayEntryInput(player_id=user, amount=fee)
    )


QUERIES: list[str] = []
"""Every query a workflow answered on a worker built with ``CountQueries`` (its name)."""


class _CountingInbound(WorkflowInboundInterceptor):
    async def handle_query(self, input: HandleQueryInput) -> Any:
        QUERIES.append(input.query)
        return await super().handle_query(input)


class CountQueries(Interceptor):
    """A worker interceptor that records every query its workflows answer in ``QUERIES``."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _CountingInbound


async def set_stream(db: Database, table_id: str, player: str, dropped_ago: float | None) -> None:
    """Record what the API records of a seated player's stream at a table (api/presence.py):
    open (``dropped_ago`` None) or dropped that many seconds ago, by the database's clock.
    The time-skipping server's clock runs ahead of the database's, so the clock tests say
    when the drop was instead of waiting for it."""
    from sqlalchemy import text

    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO stream_presence (table_id, player_id, dropped_at, updated_at)"
                " VALUES (:t, :p, CASE WHEN CAST(:ago AS float) IS NULL THEN NULL"
                " ELSE now() - make_interval(secs => CAST(:ago AS float)) END, now())"
                " ON CONFLICT (table_id, player_id) DO UPDATE"
                " SET dropped_at = excluded.dropped_at, updated_at = excluded.updated_at"
            ),
            {"t": table_id, "p": player, "ago": dropped_ago},
        )
