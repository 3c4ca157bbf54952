"""L1 (security review): a client's mistake answered 500.

NUL characters reached PostgreSQL from paths and bodies; a non-ASCII service key crashed the
codec's comparison; chain refusal codes had no status; unknown routes answered FastAPI's
``{"detail"}`` instead of the catalogue's ``{code, message}``, an unknown tournament's hands
were ``200 []``; and money amounts took ``"1000"``, ``1000.0`` and ``true``. Each is a coded 4xx
now, and changes nothing.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from temporalio.worker import Worker

from activities.chain import ChainError
from api.errors import STATUS
from core.settings import Settings
from domain.errors import ErrorCode
from tests.integration.helpers import admin, balance, create, credit, player

NUL_PATHS = [
    "/tournaments/%00/hands",
    "/tournaments/%00/events.json",
    "/tournaments/%00",
    "/rooms/%00",
    "/rooms/%00/hands",
    "/tournaments/x/hands?after=%00",
]


async def test_nul_anywhere_is_a_coded_422(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for path in NUL_PATHS:
            r = await http.get(path)
            assert r.status_code == 422 and r.json()["code"] == "validation_error", (path, r.text)
        tid = await create(http, settings)
        user = f"l1-{uuid.uuid4().hex[:6]}"
        r = await http.post(
            f"/tournaments/{tid}/register",
            json={"advisorAgentId": "a\u0000b"},
            headers=player(settings, user),
        )
        assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
        r = await http.post(
            "/ui/login",
            content=b"key=a%00b",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 422, r.text


async def test_a_non_ascii_service_key_is_refused_not_a_crash(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for header in ("x-service-key", "authorization"):
            value = "bearer \u00fc" if header == "authorization" else "\u00fc"
            r = await http.post(
                "/codec/decode", json={"payloads": []}, headers={header: value.encode("latin-1")}
            )
            assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text


async def test_unknown_routes_and_ids_answer_the_catalogue_404(
    api_url: str, settings: Settings, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        for path in ("/no/such/route", f"/tournaments/t-{uuid.uuid4().hex}/hands"):
            r = await http.get(path)
            assert r.status_code == 404, (path, r.text)
            assert r.json()["code"] == "not_found" and r.json()["message"], r.text
        r = await http.delete("/healthz")
        assert r.status_code == 405 and r.json()["code"] == "method_not_allowed", r.text


@pytest.mark.parametrize("amount", ["100", 100.0, True])
async def test_money_amounts_are_strict_integers(
    api_url: str, settings: Settings, worker: Worker, amount: object
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        user = f"l1s-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, user, 1_000)
        r = await http.post(f"/tournaments/{tid}/register", json={}, headers=player(settings, user))
        assert r.status_code == 200, r.text
        r = await http.post(
            f"/tournaments/{tid}/pay", json={"amount": amount}, headers=player(settings, user)
        )
        assert r.status_code == 422 and r.json()["field"] == "amount", r.text
        r = await http.post(
            "/admin/ledger/credit",
            json={"userId": user, "amount": amount, "idempotencyKey": f"l1-{user}"},
            headers=admin(settings),
        )
        assert r.json()["field"] == "amount", r.text
        assert r.status_code == 422, r.text
        assert await balance(http, settings, user) == 1_000


def test_every_code_has_a_status() -> None:
    assert set(ErrorCode) <= set(STATUS), set(ErrorCode) - set(STATUS)
    assert {c.value for c in ChainError} <= {c.value for c in ErrorCode}
