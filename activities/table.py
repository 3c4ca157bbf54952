"""Table side effects: the secret seed each hand's deck is shuffled from.

The seed comes from the operating system's CSPRNG, never from ``workflow.random()`` (whose seed
is in the workflow's history). The result is recorded in history as the activity's result, which
the payload codec encrypts, and it is only shown to players after the hand.
"""

from __future__ import annotations

import secrets

from temporalio import activity


@activity.defn
async def new_deck_seed(table_hand: str) -> str:
    """A fresh 32-byte seed (hex) for the hand named by ``table_hand`` (for the logs only)."""
    activity.logger.debug("deck seed for %s", table_hand)
    return secrets.token_bytes(32).hex()
