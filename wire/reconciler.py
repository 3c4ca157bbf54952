"""The payout reconciler's inputs and outputs (``workflows/reconciler.py``).

The seed's "30s reconciler": every 30 seconds a sweep picks the payout intents that are not
confirmed and were made more than 30 seconds ago, clears their refusal, and drives each again
through the same keyed payment activity the tournament uses, so an intent pays once whoever
drives it.
"""

from __future__ import annotations

from pydantic import Field

from wire.messages import WireModel

SWEEP_AGE_SECONDS = 30
"""An intent is due once it is this old and still unconfirmed (the seed's ``now() - 30s``)."""

SWEEP_PAGE = 100
"""Intents per page of a sweep; a sweep pages through every due intent."""


class ReconcileInput(WireModel):
    """One sweep. The schedule starts it with no input (these defaults): the codec binds a
    payload to the workflow id it was written for, and a schedule's runs get ids of their
    own, so a schedule cannot carry one."""

    older_than_seconds: int = Field(default=SWEEP_AGE_SECONDS, ge=0)
    page_size: int = Field(default=SWEEP_PAGE, ge=1, le=1000)
    after: str = ""
    """Resume after this intent id (a long sweep continues as new from there)."""


class DuePayoutsQuery(WireModel):
    older_than_seconds: int
    after: str
    limit: int


class ReconcileResult(WireModel):
    """What one sweep (its last run, when it continued as new) did, by intent id."""

    confirmed: list[str] = Field(default_factory=list)
    """Paid (now or earlier, by whoever) and marked confirmed."""
    refused: list[str] = Field(default_factory=list)
    """A definite refusal (the escrow short, the chain reverting): marked failed again, with
    the reason, until a later sweep."""
    deferred: list[str] = Field(default_factory=list)
    """No answer this time (a fault that outlasted the sweep's retries, a receipt that does
    not match): left as it was for the next sweep."""
    closed: list[str] = Field(default_factory=list)
    """Tournaments whose workflow ended in ``settling`` (terminated, reset) and whose every
    intent is now confirmed: closed in the read model by the sweep (their own settlement
    would have done it)."""


CLOSE_PAGE = 100
"""Orphaned settlements a sweep closes at most (the next sweep takes the rest)."""
