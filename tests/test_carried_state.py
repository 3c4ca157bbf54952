"""The tournament's carried hand reports and table result are typed (architecture review,
change 5): a state carried as the old plain dicts (``HandReport.model_dump()``: Python names,
inside a payload written by alias) still reads, into the models, and a typed state reads back
from its own payload. A table's state, split by venue (change 3), reads what one
``TableState`` carried for both venues before."""

from __future__ import annotations

from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter

from wire.messages import TournamentState
from wire.table_messages import (
    HandLoopState,
    HandReport,
    RoomSpec,
    RoomState,
    TableResult,
    TableState,
)

REPORT = HandReport(
    table_id="table-t1",
    hand_no=7,
    level=2,
    record={"hand_no": 7, "board": ["As", "Kd", "2c"]},
    stacks_after={1: 1200, 2: 1800},
    busted=[{"seat": 3, "stack_before": 40}],
    auto_folds=1,
    mac="ab" * 32,
    ended_at_ms=123_456,
)
RESULT = TableResult(table_id="table-t1", hands_played=9, stacks={1: 1500, 2: 1500}, auto_folds=0)
CONVERTER = pydantic_data_converter.payload_converter


def _through_a_payload(value: Any) -> TournamentState:
    (payload,) = CONVERTER.to_payloads([value])
    (state,) = CONVERTER.from_payloads([payload], [TournamentState])
    assert isinstance(state, TournamentState)
    return state


def test_a_state_carried_as_dicts_reads_typed() -> None:
    old = {
        "tournament_id": "t1",
        "name": "carried",
        "pending_hands": [REPORT.model_dump()],
        "table_done": RESULT.model_dump(),
    }
    state = _through_a_payload(old)
    assert state.pending_hands == [REPORT]
    assert state.pending_hands[0].ended_at_ms == 123_456
    assert state.table_done == RESULT


def test_a_typed_state_reads_back_from_its_payload() -> None:
    state = TournamentState(
        tournament_id="t1", name="carried", pending_hands=[REPORT], table_done=RESULT
    )
    assert _through_a_payload(state) == state


# A room's and a tournament table's carried state as one TableState wrote them, before the
# split by venue (architecture review, change 3): every field, the other venue's empty.
_OLD_TABLE_STATE = {
    "table_id": "table-t1-1",
    "tournament_id": None,
    "parent_workflow_id": None,
    "seat_count": 2,
    "settings": {},
    "play_start_ms": 1_000,
    "seats": [{"seat": 0, "player_id": "p0", "stack": 1000}],
    "hand_no": 4,
    "stop_requested": False,
    "report_secret": "",
    "report_mac": False,
    "version": 17,
    "room": None,
    "chain_head": "ab" * 32,
}
_ROOM = RoomSpec(
    room_id="r1",
    name="old room",
    entry=1000,
    small_blind=5,
    big_blind=10,
    speed="normal",
    decision_timeout=30,
    disconnect_grace=60,
    created_ms=1_000,
    idle_since_ms=1_000,
)


def _carried(value: Any, kind: type[HandLoopState]) -> Any:
    (payload,) = CONVERTER.to_payloads([value])
    (state,) = CONVERTER.from_payloads([payload], [kind])
    assert isinstance(state, kind)
    return state


def test_a_room_state_carried_before_the_split_reads_as_a_room_state() -> None:
    old = {**_OLD_TABLE_STATE, "room": _ROOM.model_dump()}
    state = _carried(old, RoomState)
    assert state.room == _ROOM
    assert (state.hand_no, state.version, state.chain_head) == (4, 17, "ab" * 32)
    assert not hasattr(state, "settings") and not hasattr(state, "parent_workflow_id")
    assert _carried(state, RoomState) == state


def test_a_table_state_carried_before_the_split_reads_as_a_tournament_table_state() -> None:
    old = {**_OLD_TABLE_STATE, "parent_workflow_id": "tournament-t1", "report_mac": True}
    state = _carried(old, TableState)
    assert (state.parent_workflow_id, state.report_mac, state.hand_no) == ("tournament-t1", True, 4)
    assert state.room_shown() is None and not hasattr(state, "room")
    assert _carried(state, TableState) == state
