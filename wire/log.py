"""What a workflow hands the durable event log (docs/events.md): its own module, below both
``wire.messages`` and ``wire.table_messages``, which each publish through it."""

from __future__ import annotations

from typing import Any

from wire.base import WireModel


class EventInput(WireModel):
    """One event for the durable log behind the stream; the dedupe key makes retries harmless."""

    tournament_id: str
    type: str
    dedupe_key: str
    payload: dict[str, Any]
