"""S8 (security review 3): CoPilot advice was keyed without the table.

An MTT's tables number their hands each on their own. Advice was unique per (tournament,
player, hand, turn), so after a move the player was shown advice stored for the old table's
hand of the same number and turn, and the advisor's real advice at the new table was refused
``advice_already_given``. Now the table is part of the key, on the write and on the read
(migration 0013), and the player's stream tells turns apart by table too.
"""

from __future__ import annotations

import uuid

from db import advice
from db.engine import Database


async def test_the_same_hand_and_turn_at_another_table_is_its_own_advice(db: Database) -> None:
    tid = f"s8-{uuid.uuid4().hex[:8]}"
    common = {"scope_id": tid, "player_id": "moved", "hand_number": 3, "turn": 1}
    old_table = await advice.record(
        db,
        **common,
        table_id=f"table-{tid}-1",
        advisor_agent_id="agent-a",
        action="fold",
        amount=None,
        reason="at table 1",
    )
    new_table = await advice.record(
        db,
        **common,
        table_id=f"table-{tid}-3",
        advisor_agent_id="agent-a",
        action="call",
        amount=None,
        reason="at table 3",
    )
    assert old_table and new_table, "the advice at the new table was refused"
    found = await advice.for_turn(db, tid, f"table-{tid}-3", "moved", 3, 1)
    assert found is not None and found["reason"] == "at table 3"
    again = await advice.record(
        db,
        **common,
        table_id=f"table-{tid}-3",
        advisor_agent_id="agent-a",
        action="fold",
        amount=None,
        reason="second",
    )
    assert not again  # one per turn at a table still: the first stands
