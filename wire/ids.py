"""Every workflow id, spelled once. A workflow's read-store key (``read_states.key``) is its
workflow id, so these name both. Changing one orphans every running workflow and every stored
row under the old spelling: they are part of the wire."""

from __future__ import annotations


def tournament_workflow_id(tournament_id: str) -> str:
    """>>> tournament_workflow_id("t1")
    'tournament-t1'
    """
    return f"tournament-{tournament_id}"


def table_workflow_id(tournament_id: str, table_no: int = 1) -> str:
    """A tournament's table (a Sit-and-Go has one).

    >>> table_workflow_id("t1")
    'table-t1-1'
    """
    return f"table-{tournament_id}-{table_no}"


def room_workflow_id(room_id: str) -> str:
    """A cash room, by its public id (``room_…``) or its bare one.

    >>> room_workflow_id("room_abc"), room_workflow_id("abc")
    ('room-abc', 'room-abc')
    """
    return f"room-{room_id.removeprefix('room_')}"


RECONCILER_SCHEDULE_ID = "sng-payout-reconciler"
"""The payout reconciler's Temporal Schedule; each sweep it starts is a ``ReconcilerWorkflow``
whose id is this plus the tick's time (docs/operations.md)."""
