"""What the table does for a player whose decision timer ran out (seed 004, "Decision timeouts").

1. The first timeout: the player is auto-checked if a check is legal, otherwise auto-folded.
2. The second consecutive timeout: auto-folded and marked sitting out, even where a check is
   legal.
3. Sitting out three consecutive hands removes the player (a room's rule:
   ``domain.rooms.SAT_OUT_HANDS_LIMIT``).

A player who sits out is not asked again: the table checks for them where it can, else folds
(``sitting_out_action``), until they sit in.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.holdem.betting import ActionKind

SIT_OUT_AFTER = 2
"""The consecutive timeout that folds and sits the player out."""


@dataclass(frozen=True, slots=True)
class TimeoutPenalty:
    """The action the table takes for the player, and whether they now sit out."""

    action: ActionKind
    sits_out: bool


def timeout_penalty(consecutive: int, *, can_check: bool) -> TimeoutPenalty:
    """The penalty for the ``consecutive``-th timeout in a row (1 for the first).

    >>> timeout_penalty(1, can_check=True)
    TimeoutPenalty(action=<ActionKind.CHECK: 'check'>, sits_out=False)
    >>> timeout_penalty(1, can_check=False).action.value
    'fold'
    >>> [(p.action.value, p.sits_out) for p in (timeout_penalty(n, can_check=True) for n in (2, 3))]
    [('fold', True), ('fold', True)]
    """
    if consecutive < 1:
        raise ValueError("a timeout is at least the first")
    if consecutive >= SIT_OUT_AFTER:
        return TimeoutPenalty(ActionKind.FOLD, sits_out=True)
    return TimeoutPenalty(ActionKind.CHECK if can_check else ActionKind.FOLD, sits_out=False)


def sitting_out_action(*, can_check: bool) -> ActionKind:
    """What the table does for a player who sits out (or is leaving) when the turn is theirs.

    >>> sitting_out_action(can_check=True).value, sitting_out_action(can_check=False).value
    ('check', 'fold')
    """
    return ActionKind.CHECK if can_check else ActionKind.FOLD


def disconnect_grace_left(grace: float, dropped_ago: float | None) -> float:
    """Seconds the table still waits, when a player's decision timer ran out, because their
    stream dropped ``dropped_ago`` seconds before (seed 004: "If a player's WebSocket drops,
    they get disconnectGrace seconds to reconnect before the timeout rules apply"). The grace
    is measured from the drop: 0 when the stream is open (``None``) or the grace is over.

    >>> [disconnect_grace_left(30, ago) for ago in (None, 8.5, 31)]
    [0.0, 21.5, 0.0]
    """
    if dropped_ago is None:
        return 0.0
    return max(0.0, float(grace) - max(0.0, dropped_ago))
