"""Inputs, outputs and views of the TableWorkflow's handlers, shared with the tournament and API."""

from __future__ import annotations

from typing import Any

from workflows.messages import WireModel


class TableSeat(WireModel):
    seat: int
    player_id: str
    stack: int
    sitting_out: bool = False
    timeouts: int = 0
    """Consecutive decision timeouts: the second in a row sits the player out."""


class TableState(WireModel):
    """Everything a table carries across continue-as-new (between hands only)."""

    table_id: str
    tournament_id: str | None
    parent_workflow_id: str | None
    seat_count: int
    settings: dict[str, Any]
    play_start_ms: int
    seats: list[TableSeat]
    hand_no: int = 0
    positions: dict[str, int] | None = None
    auto_folds: int = 0
    hand_pause_ms: int = 2000
    stop_requested: bool = False
    version: int = 0


class ActInput(WireModel):
    player_id: str
    hand_no: int
    turn: int
    """The turn id from the view the player answered: a stale one is refused (stale_turn)."""
    action: str
    amount: int | None = None


class ActResult(WireModel):
    ok: bool = True
    version: int
    hand_no: int
    turn: int


class SitInInput(WireModel):
    player_id: str


class HandReport(WireModel):
    """What a finished hand tells the tournament (signal ``hand_completed``)."""

    table_id: str
    hand_no: int
    level: int
    record: dict[str, Any]
    stacks_after: dict[int, int]
    busted: list[dict[str, int]]
    """[{seat, stack_before}] for each seat this hand busted."""
    auto_folds: int


class TableResult(WireModel):
    table_id: str
    hands_played: int
    stacks: dict[int, int]
    aborted_hand: int | None = None
    auto_folds: int


class TableView(WireModel):
    table_id: str
    tournament_id: str | None
    hand_no: int
    level: int
    small_blind: int
    big_blind: int
    ante: int
    seats: list[TableSeat]
    hand: dict[str, Any] | None
    """The engine's view for this viewer: public state plus only the viewer's hole cards."""
    deck_commitment: str | None
    last_hand: dict[str, Any] | None = None
    """The previous hand's public summary, with its revealed seed (so it can be verified)."""
    finished: bool = False
    version: int
