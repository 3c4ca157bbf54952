"""Requests that Update handlers leave for the main loop, and the loop's answers.

The determinism rule (docs/durability.md, rule 1) for Updates that change what a workflow does:
the handler validates, puts its input here and waits; only the main loop takes requests, at
the points where it waits anyway, and answers them. So the commands a request causes (a money
activity, a record, an event) and the Update's own completion come after whatever the loop
would have done before the request arrived, whether the request reached the worker in the
same activation as the loop's other inputs or in a later one.

A loop serves the requests it finds before it looks at a fired timer, as the table applies
actions before a timeout: a replay hands the workflow an Update together with the timer that
fired after it, and the SDK accepts the Update before any coroutine runs; serving it first
is what the run that wrote the history did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow


class Inbox:
    """The handlers' ``ask`` and the main loop's ``take``/``answer``, by request number."""

    def __init__(self) -> None:
        self._waiting: list[tuple[int, Any]] = []
        self._answers: dict[int, Any] = {}
        self._seq = 0

    def __bool__(self) -> bool:
        return bool(self._waiting)

    async def ask(self, request: Any) -> Any:
        """Leave a request for the main loop and wait for its answer (an exception is raised)."""
        self._seq += 1
        number = self._seq
        self._waiting.append((number, request))
        await workflow.wait_condition(lambda: number in self._answers)
        answer = self._answers.pop(number)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def take(self) -> list[tuple[int, Any]]:
        """Every request waiting, oldest first (the main loop answers each)."""
        taken, self._waiting = self._waiting, []
        return taken

    def take_one(self) -> tuple[int, Any]:
        """The oldest request waiting (the inbox must not be empty)."""
        return self._waiting.pop(0)

    def answer(self, number: int, answer: Any) -> None:
        self._answers[number] = answer

    async def deliver(self, number: int, answer: Any) -> None:
        """Answer, and wait until the handler has taken it (so the Update's completion is
        written before whatever the loop does next, however the inputs were batched: a
        handler wakes only once every ready coroutine has yielded, and the loop, left to go
        on, would issue its next command first when a later input had already arrived)."""
        self._answers[number] = answer
        await workflow.wait_condition(lambda: number not in self._answers)


async def wait_or_serve(
    ready: Callable[[], bool], inbox: Inbox, serve: Callable[[int, Any], Any]
) -> bool:
    """Wait until ``ready()`` or a request; serve every request found, then return ``ready()``.

    Callers loop: a served request may have changed what they wait for.
    """
    await workflow.wait_condition(lambda: ready() or bool(inbox))
    for number, request in inbox.take():
        await serve(number, request)
    return ready()
