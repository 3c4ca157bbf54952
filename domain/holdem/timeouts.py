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


GRACE_EVERY_HANDS = 10
"""A seat gets the disconnect grace in at most one hand of every ten (security review 3, S6).

Without a bound, a player who closed their stream just before each deadline got the whole
grace on every decision and was never timed out (a turbo decision stretched from 10 s to
33.5 s, every time). Real clients ration the same thing: a finite time bank that refills
slowly, or disconnect protection a limited number of times. A ration by hands is the
deterministic form (it reads no clock): a genuine drop still gets the seed's
``disconnectGrace`` to reconnect, and a staller is timed out like anyone else on the other
nine hands in ten (two timeouts in a row sit them out)."""


def grace_from_hand(graced_hand: int | None) -> int | None:
    """The first hand whose decisions may get the disconnect grace again (None: any).

    >>> grace_from_hand(None), grace_from_hand(7)
    (None, 17)
    """
    return None if graced_hand is None else graced_hand + GRACE_EVERY_HANDS


def grace_allowed(graced_hand: int | None, hand_no: int) -> bool:
    """Whether a decision of hand ``hand_no`` may get the disconnect grace.

    >>> [grace_allowed(None, 3), grace_allowed(3, 3), grace_allowed(3, 12), grace_allowed(3, 13)]
    [True, False, False, True]
    """
    start = grace_from_hand(graced_hand)
    return start is None or hand_no >= start


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
