"""Payload encryption end to end: a client without the key cannot read a hand in history."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker

from core import deck_vault
from core.codec import ENCODING
from domain.fairness import commit
from tests.integration.bots import passive, play
from tests.integration.hand_sink import HandSink
from tests.integration.helpers import eventually
from tests.integration.test_table import table_state
from wire.table_messages import DeckDraw, HandReport
from workflows.table import TableWorkflow


def raw(events: list[HistoryEvent]) -> bytes:
    return b"".join(e.SerializeToString() for e in events)


async def test_a_client_without_the_key_sees_neither_seed_nor_hole_cards(
    client: Client, task_queue: str, table_activities: list[Any]
) -> None:
    plain = Client(client.service_client, namespace=client.namespace)  # no codec, no key
    sink_id = f"sink-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[TableWorkflow, HandSink],
        activities=table_activities,
    ):
        sink = await client.start_workflow(HandSink.run, id=sink_id, task_queue=task_queue)
        st = table_state(["a", "b", "c"]).model_copy(update={"parent_workflow_id": sink_id})
        table = await client.start_workflow(
            TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
        )
        view = await play(
            client, table.id, ["a", "b", "c"], passive, until=lambda v: v.last_hand is not None
        )

        async def reported() -> bool:
            return "hand_completed" in await sink.query(HandSink.received)

        await eventually(reported)
        await table.signal(TableWorkflow.stop)
        await table.result()
        await sink.signal(HandSink.finish)
        await sink.result()

    table_events = (await plain.get_workflow_handle(table.id).fetch_history()).events
    sink_events = (await plain.get_workflow_handle(sink_id).fetch_history()).events
    signalled = next(
        e.workflow_execution_signaled_event_attributes
        for e in sink_events
        if e.workflow_execution_signaled_event_attributes.signal_name == "hand_completed"
    )
    # The first deck drawn dealt hand 1 (a table's first hand has no deck committed ahead):
    # its root is the last hand's, and the secret itself is revealed nowhere.
    # From ``deck-local-v1`` a draw is its local activity's marker (before: the activity's
    # completion), its result through the same codec.
    seed_payload: Payload = next(
        e.marker_recorded_event_attributes.details["result"].payloads[0]
        for e in table_events
        if e.HasField("marker_recorded_event_attributes")
        and "new_deck_seed" in str(e.marker_recorded_event_attributes.details["data"])
    )
    [draw] = await client.data_converter.decode([seed_payload], [DeckDraw])
    # Sealed again under the worker's deck key (tests/security/test_deck_secret_sealed.py).
    assert draw.seed == ""
    seed_hex = deck_vault.current().open(draw.sealed, draw.drawn_for).hex()
    assert view.last_hand["deck"]["root"] == commit(bytes.fromhex(seed_hex)).root_hex
    assert "deck_seed" not in view.last_hand and seed_hex not in json.dumps(view.last_hand)

    # The keyed client opens the hand report the table sent: each seat's own cards, apart.
    [report] = await client.data_converter.decode(signalled.input.payloads, [HandReport])
    assert "deck_seed" not in report.record
    hole = {seat: part["cards"] for seat, part in report.record["private"].items()}
    assert len(hole) == 3 and all(len(cards) == 2 for cards in hole.values())

    # Without the key: neither history holds the seed, the hole cards or even the field names.
    for blob in (raw(table_events), raw(sink_events)):
        assert seed_hex.encode() not in blob
        assert bytes.fromhex(seed_hex) not in blob
        # As JSON keys (the activity's name, new_deck_seed, is rightly in the clear).
        assert b'"hole_cards"' not in blob and b'"private"' not in blob
        for cards in hole.values():
            assert json.dumps(cards, separators=(",", ":")).encode() not in blob
            assert json.dumps(cards).encode() not in blob

    # Every payload is sealed, and the plain client cannot turn it back into a seed.
    assert seed_payload.metadata["encoding"] == ENCODING
    with pytest.raises(Exception, match="encoding"):
        await plain.data_converter.decode([seed_payload], [DeckDraw])
    assert (await client.data_converter.decode([seed_payload], [DeckDraw]))[0].sealed == draw.sealed
