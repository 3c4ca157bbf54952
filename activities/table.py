"""Table side effects: the secret each hand's deck comes from, and the clock.

The secret comes from the operating system's CSPRNG, never from ``workflow.random()`` (whose
seed is in the workflow's history). It is recorded in history as the activity's result sealed
under the worker-only deck key (core/deck_vault.py), inside the payload codec's encryption, so
neither the codec endpoint nor anyone holding the codec key reads it; only the table opens it.
"""

from __future__ import annotations

import secrets

from temporalio import activity

from core import deck_vault
from wire.table_messages import DeckDraw


@activity.defn
async def new_deck_seed(table_hand: str) -> DeckDraw:
    """A fresh 32-byte seed (hex) for the hand named by ``table_hand`` (for the logs only),
    with the time it was drawn: the table reads the hand's blinds at that recorded time, never
    at ``workflow.now()`` (docs/durability.md)."""
    activity.logger.debug("deck seed for %s", table_hand)
    secret = secrets.token_bytes(32)
    return DeckDraw(
        sealed=deck_vault.current().seal(secret, table_hand),
        drawn_for=table_hand,
        drawn_at_ms=_server_time_ms(),
    )


@activity.defn
async def new_secret(purpose: str) -> str:
    """A fresh 128-bit secret (hex) from the CSPRNG: a tournament gives one to its table, and
    the table signs its reports with it (``purpose`` is for the logs only)."""
    activity.logger.debug("secret for %s", purpose)
    return secrets.token_hex(16)


@activity.defn
async def wall_clock_ms() -> int:
    """Temporal's clock as a recorded result, for a time that later decisions rest on."""
    return _server_time_ms()


def _server_time_ms() -> int:
    # When Temporal scheduled this activity, by its own clock: the clock the workflow's timers
    # run on (and the one time skipping moves in tests), never this worker's.
    return int(activity.info().scheduled_time.timestamp() * 1000)
