"""Table side effects: the secret seed each hand's deck is shuffled from, and the clock.

The seed comes from the operating system's CSPRNG, never from ``workflow.random()`` (whose seed
is in the workflow's history). The result is recorded in history as the activity's result, which
the payload codec encrypts, and it is only shown to players after the hand.
"""

from __future__ import annotations

import secrets

from temporalio import activity

from wire.table_messages import DeckDraw


@activity.defn
async def new_deck_seed(table_hand: str) -> DeckDraw:
    """A fresh 32-byte seed (hex) for the hand named by ``table_hand`` (for the logs only),
    with the time it was drawn: the table reads the hand's blinds at that recorded time, never
    at ``workflow.now()`` (docs/durability.md)."""
    activity.logger.debug("deck seed for %s", table_hand)
    return DeckDraw(seed=secrets.token_bytes(32).hex(), drawn_at_ms=_server_time_ms())


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
