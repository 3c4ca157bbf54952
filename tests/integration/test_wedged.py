"""A workflow that cannot make progress: seen by operators, its record still served from the
read model (the last view it wrote), and brought back with the runbook's Temporal reset
(docs/operations.md).

The wedge is made the way the drills made theirs, from the worker's side: the history was
written by one version of the code and the workers now running cannot replay it (here a build
whose tournament takes one extra timer first, as if a release had changed it without a
patch). Every workflow task fails with a nondeterminism error and Temporal retries it for ever.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from core.settings import Settings
from db import ledger
from db.engine import Database
from devtools.devstack import temporal_binary
from tests.conftest import serve_api
from tests.integration.helpers import create, credit, eventually, player
from tests.integration.unpatched import ReleasedWithoutAPatch
from tests.replay import written_by_another_build
from worker import activities_for, build_worker, single_batch
from workflows.table import TableWorkflow


async def test_a_wedged_tournament_is_flagged_and_a_reset_brings_it_back(
    client: Client, settings: Settings, db: Database, task_queue: str
) -> None:
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        async with build_worker(client, db, task_queue):
            tid = await create(http, settings, seats=2)
            await credit(http, settings, "wedge-a", 500)
            r = await http.post(
                f"/tournaments/{tid}/register", json={}, headers=player(settings, "wedge-a")
            )
            assert r.status_code == 200, r.text
            r = await http.post(
                f"/tournaments/{tid}/pay", json={"amount": 100}, headers=player(settings, "wedge-a")
            )
            assert r.status_code == 200, r.text

        # The workers are replaced by a build that cannot replay what the first one wrote
        # (and that build, not today's, writes this workflow's later runs).
        written_by_another_build(f"tournament-{tid}")
        wrong = single_batch(
            Worker(
                client,
                task_queue=task_queue,
                workflows=[ReleasedWithoutAPatch, TableWorkflow],
                activities=activities_for(db),
                max_cached_workflows=0,
            )
        )
        async with wrong:
            # The record is read from the read model, not asked of the workflow (architecture
            # review 2026-12-03, change 4): the last view it wrote, not a 500, a 503 or a hang.
            r = await http.get(f"/tournaments/{tid}")
            assert r.status_code == 200, r.text
            assert (r.json()["state"], r.json()["paidCount"]) == ("registering", 1), r.text
            # A second player's registration gives the workflow a task, which fails for ever.
            await credit(http, settings, "wedge-b", 500)
            register = asyncio.create_task(
                http.post(
                    f"/tournaments/{tid}/register", json={}, headers=player(settings, "wedge-b")
                )
            )
            handle = client.get_workflow_handle(f"tournament-{tid}")

            async def failing() -> bool:
                desc = await handle.describe()
                return desc.raw_description.pending_workflow_task.attempt >= 2

            await eventually(failing, limit=60)
            login = await http.post("/ui/login", data={"serviceKey": settings.key("admin")})
            assert login.status_code == 303, login.text
            page = await http.get(f"/ui/tournaments/{tid}")
            # The page shows the stored state and the flag.
            assert page.status_code == 200, page.text
            assert 'id="wedged"' in page.text and "NON_DETERMINISTIC_ERROR" in page.text
            assert "temporal workflow reset" in page.text

            # The runbook: reset to the last workflow task the running build can replay (here
            # the first one; docs/operations.md says how to find it from the failure).
            address = client.service_client.config.target_host
            reset = await asyncio.create_subprocess_exec(
                temporal_binary(),
                "workflow",
                "reset",
                "--address",
                address,
                "--workflow-id",
                f"tournament-{tid}",
                "--type",
                "FirstWorkflowTask",
                "--reason",
                "wedged: history from an unpatched release",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(reset.communicate(), timeout=60)
            assert reset.returncode == 0, (out + err).decode()

            async def registered() -> dict[str, Any] | None:
                r = await http.get(f"/tournaments/{tid}")
                ok = r.status_code == 200 and r.json()["registeredCount"] >= 1
                return r.json() if ok else None

            # The reset re-applies the Updates after its point, each through its validator
            # again: the registration comes back; a pay validated before the registration's
            # handler finished is refused, so the player pays again (the runbook's last step)
            # and, the money move being keyed by the entry, nothing is taken twice.
            view = await eventually(registered, limit=60)
            if view["paidCount"] == 0:
                r = await http.post(
                    f"/tournaments/{tid}/pay",
                    json={"amount": 100},
                    headers=player(settings, "wedge-a"),
                )
                assert (r.status_code, r.json()["status"]) == (200, "paid"), r.text
            view = await eventually(registered, limit=30)
            assert view["paidCount"] == 1, view
            register.cancel()
    assert await ledger.balance(db, ledger.user_account("wedge-a")) == 400
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 100
