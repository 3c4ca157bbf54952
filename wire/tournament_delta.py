"""The tournament's read model in parts (issue 31, docs/read-model.md "The tournament's view
in parts"): a bounded head and one row per entrant, and the one function that puts them back
together into the ``TournamentView`` the API has always served.

A whole view grows with the field (every entrant, stack and standing): at 10,000 entrants it
passes Temporal's 2 MB payload limit, and every hand's activity input carried it. The
workflow now publishes the head (everything but entrants, stacks and standings) and the
entrants that changed since its last publication; the store keeps one row per entrant.
"""

from __future__ import annotations

from collections.abc import Iterable

from wire.messages import (
    EntrantDelta,
    EntrantStatus,
    EntrantView,
    Placing,
    TournamentDelta,
    TournamentView,
)

# The doctest builds its parts from these too.
__all__ = ["EntrantDelta", "EntrantView", "Placing", "TournamentDelta", "compose", "is_head"]


def is_head(view: TournamentView) -> bool:
    """A stored view that is a head (its entrants in rows), not a whole view stored before the
    read model came in parts (a legacy head, served as it is)."""
    return not (view.entrants or view.stacks or view.standings)


def compose(head: TournamentView, rows: Iterable[EntrantDelta]) -> TournamentView:
    """The whole view from a head and its entrants' rows, as ``Books.view`` builds it:
    entrants in the workflow's order (released entries left out), stacks in theirs,
    standings by place. A legacy head (a whole view) is returned as it is.

    >>> head = TournamentView(tournament_id="t", name="n", state="playing", kind="sng",
    ...     seats=2, entry_fee=0, starting_stack=100, registered_count=2, entrants=[],
    ...     version=7)
    >>> a = EntrantView(player_id="a", owner_user_id="u", is_agent=False, status="paid")
    >>> b = a.model_copy(update={"player_id": "b"})
    >>> view = compose(head, [
    ...     EntrantDelta(player_id="b", ordinal=1, entrant=b, stack=0, stack_ordinal=0,
    ...                  finishes=[Placing(player_id="b", place=2, rank=2)]),
    ...     EntrantDelta(player_id="a", ordinal=0, entrant=a, stack=200, stack_ordinal=1)])
    >>> [e.player_id for e in view.entrants], view.stacks, [p.player_id for p in view.standings]
    (['a', 'b'], {'b': 0, 'a': 200}, ['b'])
    """
    if not is_head(head):
        return head
    ordered = sorted(rows, key=lambda r: (r.ordinal, r.player_id))
    return head.model_copy(
        update={
            "entrants": [
                r.entrant
                for r in ordered
                if r.entrant is not None and r.entrant.status is not EntrantStatus.RELEASED
            ],
            "stacks": {
                r.player_id: r.stack
                for r in sorted(ordered, key=lambda r: r.stack_ordinal)
                if r.stack is not None
            },
            "standings": sorted((f for r in ordered for f in r.finishes), key=lambda f: f.place),
        }
    )
