"""The service-key registration path hosted agents use, and advisors on the player path."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from temporalio.client import Client

from core.settings import Settings
from tests.api.support import agent_headers, new_agent
from tests.integration.helpers import admin, create, credit, player
from workflows.tournament import TournamentWorkflow


async def internal(
    http: httpx.AsyncClient, settings: Settings, leg: str, table_id: str, agent_id: str
) -> httpx.Response:
    return await http.post(
        f"/internal/tournament-{leg}",
        json={"tableId": table_id, "agentId": agent_id},
        headers=admin(settings),
    )


def coded(r: httpx.Response) -> tuple[int, str]:
    return r.status_code, r.json().get("code", "")


async def entrants(http: httpx.AsyncClient, tid: str) -> list[dict[str, Any]]:
    r = await http.get(f"/tournaments/{tid}")
    assert r.status_code == 200, r.text
    return list(r.json()["entrants"])


async def test_agent_reserve_is_keyed_by_its_owner(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings, seats=2)
        bot = await new_agent(http, settings, "int-owner")
        r = await internal(http, settings, "register", tid, bot["agentId"])
        assert r.status_code == 200, r.text
        assert {k: r.json()[k] for k in ("ok", "status", "ownerUserId")} == {
            "ok": True,
            "status": "reserved",
            "ownerUserId": "int-owner",
        }
        [entrant] = await entrants(http, tid)
        # Seated as itself (it pays and acts with its own key); one entry per owner.
        assert (entrant["playerId"], entrant["isAgent"]) == (bot["agentId"], True)

        # A second agent of the same owner is the same reserve: refused.
        twin = await new_agent(http, settings, "int-owner")
        assert coded(await internal(http, settings, "register", tid, twin["agentId"])) == (
            409,
            "tournament_already_registered",
        )
        other = await new_agent(http, settings, "int-other")
        assert (
            await internal(http, settings, "register", tid, other["agentId"])
        ).status_code == 200
        third = await new_agent(http, settings, "int-third")
        assert coded(await internal(http, settings, "register", tid, third["agentId"])) == (
            409,
            "tournament_full",
        )

        # Unregister drops the unpaid reserve, and the owner may come straight back.
        left = await internal(http, settings, "unregister", tid, bot["agentId"])
        assert (left.status_code, left.json()["status"]) == (200, "released"), left.text
        assert coded(await internal(http, settings, "unregister", tid, bot["agentId"])) == (
            409,
            "tournament_not_registered",
        )
        assert (await internal(http, settings, "register", tid, bot["agentId"])).status_code == 200


async def test_a_paid_entry_is_refused_the_internal_unregister(
    api_url: str, settings: Settings
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        bot = await new_agent(http, settings, "int-payer")
        assert (await internal(http, settings, "register", tid, bot["agentId"])).status_code == 200
        await credit(http, settings, "int-payer", 500)
        paid = await http.post(  # the agent's own key; its owner's account pays
            f"/tournaments/{tid}/pay", json={"amount": 100}, headers=agent_headers(bot["key"])
        )
        assert (paid.status_code, paid.json()["status"]) == (200, "paid"), paid.text
        assert coded(await internal(http, settings, "unregister", tid, bot["agentId"])) == (
            409,
            "paid_registration_use_refund_path",
        )
        [entrant] = await entrants(http, tid)
        assert entrant["status"] == "paid"


async def test_unknown_tables_agents_and_non_tournaments(
    api_url: str, settings: Settings, client: Client
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        bot = await new_agent(http, settings, "int-lost")
        assert coded(
            await internal(http, settings, "register", "no-such-table", bot["agentId"])
        ) == (
            404,
            "table_not_found",
        )
        assert coded(await internal(http, settings, "register", tid, "agent-nope")) == (
            404,
            "agent_not_found",
        )
        await http.post(f"/admin/agents/{bot['agentId']}/revoke", headers=admin(settings))
        assert coded(await internal(http, settings, "unregister", tid, bot["agentId"])) == (
            404,
            "agent_not_found",
        )

        # An id that names some other workflow (say a tournament's table) is no tournament.
        other_id = f"table-{uuid.uuid4().hex[:8]}-1"
        other = await client.start_workflow(
            "SomeOtherWorkflow", id=other_id, task_queue=f"idle-{uuid.uuid4().hex[:8]}"
        )
        try:
            live = await new_agent(http, settings, "int-lost-2")
            assert coded(await internal(http, settings, "register", other_id, live["agentId"])) == (
                400,
                "not_a_tournament",
            )
        finally:
            await other.terminate()
        # A cash room is a table too, but not a tournament.
        r = await http.post(
            "/rooms",
            headers=admin(settings),
            json={
                "name": "r",
                "entry": {"amount": 100},
                "stakes": {"smallBlind": 1, "bigBlind": 2},
                "seats": 2,
            },
        )
        room_id = r.json()["roomId"]
        assert coded(await internal(http, settings, "register", room_id, live["agentId"])) == (
            400,
            "not_a_tournament",
        )
        await http.post(f"/rooms/{room_id}/close", headers=admin(settings))

        for body in (
            {},
            {"tableId": tid},
            {"tableId": "", "agentId": "a"},
            {"tableId": "a b", "agentId": "a"},
        ):
            r = await http.post("/internal/tournament-register", json=body, headers=admin(settings))
            assert coded(r) == (422, "validation_error"), body


async def test_audience_and_closed_registration(api_url: str, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        bot = await new_agent(http, settings, "int-aud")
        humans = await create(http, settings, kind="human_only")
        assert coded(await internal(http, settings, "register", humans, bot["agentId"])) == (
            409,
            "agent_not_allowed_at_human_table",
        )
        cancelled = await create(http, settings)
        r = await http.post(
            f"/admin/tournaments/{cancelled}/cancel", json={}, headers=admin(settings)
        )
        assert r.status_code == 200, r.text
        assert coded(await internal(http, settings, "register", cancelled, bot["agentId"])) == (
            409,
            "tournament_not_in_registration",
        )


async def test_copilot_advisors_are_resolved_from_the_registry(
    api_url: str, settings: Settings, client: Client
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings, kind="copilot")
        mine = await new_agent(http, settings, "cp-alice")
        theirs = await new_agent(http, settings, "cp-bob")
        unskilled = await new_agent(http, settings, "cp-alice", skills=["poker:cash-nlhe"])

        async def register(user: str, advisor: str | None) -> httpx.Response:
            body = {} if advisor is None else {"advisorAgentId": advisor}
            return await http.post(
                f"/tournaments/{tid}/register", json=body, headers=player(settings, user)
            )

        assert coded(await register("cp-alice", None)) == (409, "advisor_required")
        assert coded(await register("cp-alice", theirs["agentId"])) == (409, "advisor_required")
        assert coded(await register("cp-alice", unskilled["agentId"])) == (409, "advisor_required")
        # Seed: "a registration without a valid advisor is rejected (advisor_required)".
        assert coded(await register("cp-alice", "agent-nope")) == (409, "advisor_required")
        ok = await register("cp-alice", mine["agentId"])
        assert (ok.status_code, ok.json()["status"]) == (200, "reserved"), ok.text
        # The binding is the workflow's (the public view does not show advisors).
        view = await client.get_workflow_handle(f"tournament-{tid}").query(TournamentWorkflow.state)
        [entrant] = view.entrants
        assert entrant.advisor_agent_id == mine["agentId"]

        # An advisor on a tournament that is not copilot is refused by the workflow.
        open_tid = await create(http, settings)
        r = await http.post(
            f"/tournaments/{open_tid}/register",
            json={"advisorAgentId": theirs["agentId"]},
            headers=player(settings, "cp-bob"),
        )
        assert coded(r) == (409, "advisor_on_non_copilot_kind")
