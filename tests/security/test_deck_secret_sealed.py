"""Fairness issue: an operator read the running hand's deck through the codec endpoint.

Every payload in Temporal history is sealed by the payload codec, and the codec endpoint (the
Temporal UI's, for operators) opens them. A table's deck secret was one of those payloads (the
draw activity's result, and the next deck in the carried state), so whoever could call the
endpoint could take a secret whose commitment is the root the table had just published, and
know every card of the hand running (or about to run), folded hands and run-out included.
The attack: decode every payload of a running table's history through the endpoint, and try
every 32-byte hex value in it against the published roots. Now the draw seals the secret
again under the worker-only deck key (core/deck_vault.py): the endpoint shows only that.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import httpx
from google.protobuf import json_format
from temporalio.client import Client
from temporalio.worker import Worker

from core import deck_vault
from core.settings import Settings
from domain.fairness import commit
from tests.integration.bots import passive, play
from tests.integration.test_table import table_state
from wire.table_messages import DeckDraw
from workflows.table import TableWorkflow

HEX32 = re.compile(rb"[0-9a-f]{64}")


def payloads(node: Any) -> list[dict[str, Any]]:
    """Every payload (``{metadata, data}``) in an event, as the UI sends them to the codec."""
    if isinstance(node, dict):
        if "metadata" in node and "data" in node:
            return [node]
        return [p for value in node.values() for p in payloads(value)]
    if isinstance(node, list):
        return [p for value in node for p in payloads(value)]
    return []


async def test_the_codec_endpoint_shows_no_secret_of_a_running_hands_deck(
    api_url: str, settings: Settings, client: Client, worker: Worker, task_queue: str
) -> None:
    players = ["a", "b", "c"]
    st = table_state(players, actionTimeoutSeconds=60)
    table = await client.start_workflow(
        TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
    )
    # Two hands dealt (the first draws twice), the second one running, its next deck out.
    view = await play(client, table.id, players, passive, until=lambda v: v.hand_no >= 2)
    assert view.hand is not None and view.next_deck is not None
    roots = {view.deck_commitment, view.next_deck.commitment}

    history = await table.fetch_history()
    sent = [p for e in history.events for p in payloads(json_format.MessageToDict(e))]
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post(
            "/codec/decode?namespace=default",
            json={"payloads": sent},
            headers={"Authorization": f"Bearer {settings.key('codec')}"},
        )
    assert r.status_code == 200, r.text
    opened = [base64.b64decode(p.get("data", "")) for p in r.json()["payloads"]]
    tried = {m.decode() for text in opened for m in HEX32.findall(text)}
    found = [x for x in tried if commit(bytes.fromhex(x)).root_hex in roots]
    assert found == [], "the codec endpoint gave out a deck secret of the running table"

    # The draws are there, sealed: only the worker's deck key opens them, to those roots.
    draws = [
        e.activity_task_completed_event_attributes.result.payloads[0]
        for e in history.events
        if e.HasField("activity_task_completed_event_attributes")
    ]
    decoded = [d for d in await client.data_converter.decode(draws, [DeckDraw] * len(draws))]
    assert decoded and all(d.sealed and not d.seed for d in decoded)
    vault = deck_vault.current()
    assert roots <= {commit(vault.open(d.sealed, d.drawn_for)).root_hex for d in decoded}

    await table.signal(TableWorkflow.stop)
    await table.result()
