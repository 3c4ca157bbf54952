"""When a run hands over to a fresh one (continue-as-new): one rule for every workflow.

Temporal refuses every Update past 2,000 in one run (an operator's cancel or close included)
and terminates a run at 51,200 events; a run hands over far below both, at a boundary its
workflow chooses (between hands, in the registration loop, between payout rounds).
"""

from __future__ import annotations

from temporalio import workflow

UPDATE_BUDGET = 500
"""Accepted Updates per run (no-ops are refused by the validators and cost nothing)."""
BUDGET_RETRY_SECONDS = 5
"""A request refused because its run spent its budget (``temporarily_unavailable``) tries
again after this long: by then the run has usually handed over."""
HISTORY_BUDGET = 8_000
"""Events per run."""


def run_budget_spent(updates_this_run: int = 0, update_budget: int = UPDATE_BUDGET) -> bool:
    """Temporal suggests a fresh run, or this one accepted its Updates or holds its events."""
    info = workflow.info()
    return (
        info.is_continue_as_new_suggested()
        or updates_this_run >= update_budget
        or info.get_current_history_length() >= HISTORY_BUDGET
    )
