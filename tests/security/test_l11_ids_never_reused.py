"""L11 (security review): 40-bit ids fed the money keys, and a closed workflow's id could be
started again.

Every money key of a tournament starts with its id (``<id>:entry:<player>:<n>``,
``<id>:payout:<n>``), and a room's with its own. With ``secrets.token_hex(5)`` ids and
Temporal's default reuse policy, a repeated id after the first workflow closed would start a
new tournament whose entries look paid and whose payouts look done. Now ids are 128 random
bits and their workflow ids are started with REJECT_DUPLICATE.
"""

from __future__ import annotations

import re

import httpx
from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import Worker

from api.services.tournaments import start_workflow
from core.settings import Settings
from tests.integration.helpers import SETTINGS, create
from tests.integration.test_rooms import open_room, workflow_id


async def test_ids_are_128_bits_and_a_closed_tournaments_id_is_never_started_again(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create(http, settings)
        room_id = await open_room(http, settings)
    assert re.fullmatch(r"[0-9a-f]{32}", tid), tid
    assert re.fullmatch(r"room_[0-9a-f]{32}", room_id), room_id
    await client.get_workflow_handle(f"tournament-{tid}").terminate("closed for the test")
    await client.get_workflow_handle(workflow_id(room_id)).terminate("closed for the test")
    try:
        await start_workflow(
            client, settings, name="again", raw=dict(SETTINGS), hand_pause_ms=0, tournament_id=tid
        )
    except WorkflowAlreadyStartedError:
        pass
    else:
        raise AssertionError("a closed tournament's id was started again")
