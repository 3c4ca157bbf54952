"""Fairness issue: an operator read the running hand's deck through the codec endpoint.

Every payload in Temporal history is sealed by the payload codec, and the codec endpoint (the
Temporal UI's, for operators) opens them. A table's deck secret was one of those payloads (the
draw activity's result, and the next deck in the carried state), so whoever could call the
endpoint could take a secret whose commitment is the root the table had just published, and
know every card of the hand running (or about to run), folded hands and run-out included.
The attack: decode every payload of a running table's history through the endpoint, and try
every 32-byte hex value in it against the published roots. Now the draw seals the secret
again under the worker-only deck key (core/deck_vault.py): the endpoint shows only that.

The second attack: whoever holds the codec key and reaches Temporal runs a worker of their
own for the draw activity and answers it with a secret they chose (plain, or sealed for
another hand). The table refuses any draw not sealed under the deck key for that hand.
"""

from __future__ import annotations

import base64
import re
import time
from typing import Any

import httpx
from google.protobuf import json_format
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from activities.table import new_deck_seed
from core import deck_vault
from core.codec import EncryptionCodec
from core.settings import Settings
from db.engine import Database
from domain.fairness import commit
from tests.integration.bots import passive, play
from tests.integration.helpers import eventually
from tests.integration.test_table import table_state
from tests.replay import refusing_on_purpose
from wire.table_messages import DeckDraw
from worker import WORKFLOWS, activities_for, build_worker, single_batch
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
    # From ``deck-local-v1`` a draw's result is its local activity's marker (through the
    # same codec); before it, the activity's completion.
    draws = [
        e.activity_task_completed_event_attributes.result.payloads[0]
        for e in history.events
        if e.HasField("activity_task_completed_event_attributes")
    ] + [
        e.marker_recorded_event_attributes.details["result"].payloads[0]
        for e in history.events
        if e.HasField("marker_recorded_event_attributes")
        and "new_deck_seed" in str(e.marker_recorded_event_attributes.details["data"])
    ]
    decoded = [d for d in await client.data_converter.decode(draws, [DeckDraw] * len(draws))]
    assert decoded and all(d.sealed and not d.seed for d in decoded)
    vault = deck_vault.current()
    assert roots <= {commit(vault.open(d.sealed, d.drawn_for)).root_hex for d in decoded}

    await table.signal(TableWorkflow.stop)
    await table.result()


async def test_a_deck_drawn_by_a_rogue_worker_is_refused(
    client: Client, db: Database, task_queue: str
) -> None:
    chosen = bytes(range(32))

    @activity.defn(name="new_deck_seed")
    async def rogue_draw(table_hand: str) -> DeckDraw:
        return DeckDraw(seed=chosen.hex(), drawn_at_ms=int(time.time() * 1000))

    codec = client.data_converter.payload_codec
    assert isinstance(codec, EncryptionCodec)
    theirs = [rogue_draw, *(a for a in activities_for(db, codec=codec) if a is not new_deck_seed)]

    # From ``deck-local-v1`` the draw is a local activity: it runs in the worker that holds
    # the table's workflow task, so a worker polling the queue for activities never gets
    # one to answer. The table deals from its own sealed draws.
    st = table_state(["a", "b"], actionTimeoutSeconds=60)
    async with (
        build_worker(client, db, task_queue, no_remote_activities=True),
        Worker(client, task_queue=task_queue, activities=theirs),
    ):
        table = await client.start_workflow(
            TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
        )
        view = await play(client, table.id, ["a", "b"], passive, until=lambda v: v.hand_no >= 1)
        assert view.deck_commitment != commit(chosen).root_hex
        await table.signal(TableWorkflow.stop)
        await table.result()

    # A rogue that runs the table's workflow tasks itself, its draw answering with a secret
    # it chose: the table refuses the draw.
    st = table_state(["a", "b"], actionTimeoutSeconds=60)
    async with single_batch(
        Worker(client, task_queue=task_queue, workflows=list(WORKFLOWS), activities=theirs)
    ):
        table = await client.start_workflow(
            TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
        )
        refusing_on_purpose(table.id)

        async def refused() -> str | None:
            async for e in table.fetch_history_events():
                if e.HasField("workflow_task_failed_event_attributes"):
                    return str(e.workflow_task_failed_event_attributes.failure.message)
            return None

        message = await eventually(refused, 20)
    assert "refused a deck draw not sealed" in message
    # Nothing was dealt from the chosen secret: no decision ever started its timer.
    kinds = {EventType.Name(e.event_type) async for e in table.fetch_history_events()}
    assert "EVENT_TYPE_TIMER_STARTED" not in kinds, kinds
    await table.terminate("test: a refused draw retries forever")
