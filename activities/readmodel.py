"""The pushed read model's writes (docs/read-model.md): a table's or a tournament's newest
published state, upserted by version, then ``NOTIFY`` so every API replica reads it at once.

A table publishes by local activity before it waits, so the write happens before the workflow
task that produced the state commits. If that task is lost (the worker died), the next worker
runs it again and may publish the same version with other contents: so a write of the same
version overwrites, and only an older one is ignored. Each seat's private part (its hole
cards) is sealed for that seat, table and hand, and only the API, which holds the key, opens it.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import activity

from activities.events import append
from core.codec import EncryptionCodec
from db.engine import Database
from db.readstore import seat_binding, write_state, write_state_now
from wire.table_messages import TablePublication


class ReadModelActivities:
    def __init__(self, db: Database, codec: EncryptionCodec) -> None:
        self.db = db
        self.codec = codec

    @activity.defn
    async def publish_table(self, publication: TablePublication) -> None:
        """A room's stream events (in order; a retry's duplicates are skipped), then the
        table's newest version, in one transaction; a version alone in one statement."""
        state = publication.state
        written: dict[str, Any] | None = None
        if state is not None:
            view = state.view
            sealed = {
                player: self.codec.seal_value(
                    json.dumps(cards).encode(), seat_binding(state.key, player, view.hand_no)
                )
                for player, cards in state.private.items()
            }
            written = {
                "key": state.key,
                "kind": "room" if view.room else "table",
                "version": view.version,
                "public": {"view": view.model_dump(mode="json"), "legal": state.legal},
                "private": sealed,
            }
        if not publication.events:
            if written is not None:
                await write_state_now(self.db, **written)
            return
        async with self.db.session() as session:
            for event in publication.events:  # one by one: the log's id order is the order
                await append(session, event)
            if written is not None:
                await write_state(session, **written)
            await session.commit()
