"""The tournament's carried hand reports and table result are typed (architecture review,
change 5): a state carried as the old plain dicts (``HandReport.model_dump()``: Python names,
inside a payload written by alias) still reads, into the models, and a typed state reads back
from its own payload."""

from __future__ import annotations

from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter

from wire.messages import TournamentState
from wire.table_messages import HandReport, TableResult

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
