"""Timers as state: the deadline a main loop owns, read after every input, never raced.

The determinism rule (docs/durability.md) in one place:

- A deadline has passed only when its timer fired. ``workflow.now()`` is never compared with a
  deadline to decide anything: a worker that applies a task's events early (a query or a
  history page served while a task was stuck on a dead worker) runs that activation with an
  older clock than the replay of the same history does.
- A timer is started once per deadline and its firing becomes a flag. The main loop waits
  with ``wait_condition`` on state only (no ``timeout=``), so waiting itself issues no command
  and the commands the loop issues depend on the state it finds, not on which awaitable won.
- Timer durations may use ``workflow.now()``: Temporal does not check a timer's duration on
  replay, only that the timer was started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow

MIN_DELAY = timedelta(milliseconds=1)
"""A deadline already behind us still gets a (1 ms) timer, so the loop's commands are the same
whatever the clock said when it was armed."""


class Alarm:
    """One timer for one deadline; ``fired`` turns true when Temporal says it fired.

    Start one with ``await Alarm.start(...)``: it yields once so the timer is really started
    (its id taken) before the caller can cancel it. Otherwise an alarm cancelled in the same
    activation would take no id when every input came at once, and one when they came in two
    activations, and the ids of later timers, which Temporal checks, would differ.
    """

    def __init__(
        self, delay: timedelta, summary: str, on_fire: Callable[[], None] | None = None
    ) -> None:
        self.fired = False
        self.summary = summary
        self._on_fire = on_fire
        self._task = asyncio.ensure_future(self._ring(max(delay, MIN_DELAY)))

    @classmethod
    async def start(
        cls, delay: timedelta, summary: str, on_fire: Callable[[], None] | None = None
    ) -> Alarm:
        """``on_fire`` runs when the timer fires (in the order Temporal reports firings), for
        a loop that must take its alarms in that order."""
        alarm = cls(delay, summary, on_fire)
        await asyncio.sleep(0)  # the timer's task runs first and starts the timer
        return alarm

    @classmethod
    async def until(
        cls, deadline_ms: int, summary: str, on_fire: Callable[[], None] | None = None
    ) -> Alarm:
        """An alarm for an absolute deadline (the duration is data, the firing is the fact)."""
        now_ms = int(workflow.now().timestamp() * 1000)
        return await cls.start(timedelta(milliseconds=deadline_ms - now_ms), summary, on_fire)

    async def _ring(self, delay: timedelta) -> None:
        await workflow.sleep(delay, summary=self.summary)
        self.fired = True
        if self._on_fire is not None:
            self._on_fire()

    def cancel(self) -> None:
        """Stop a timer whose deadline no longer matters (no command if it already fired)."""
        if not self.fired and not self._task.done():
            self._task.cancel()
