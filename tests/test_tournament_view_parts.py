"""The books' parts of a tournament's view (issue 31, docs/read-model.md "The tournament's view
in parts"): a head and the players' parts put back together are the whole view, and a
publication carries only the players that changed since the last, across continue-as-new
too."""

from __future__ import annotations

from domain.settings import validate_settings
from wire.messages import (
    CreateTournamentInput,
    EntrantStatus,
    EntrantView,
    Placing,
    TournamentState,
)
from wire.tournament_delta import compose
from workflows.tournament.books import Books, Part, same_part

SETTINGS = {
    "seats": 4,
    "maxEntrants": 8,
    "entryFee": 100,
    "startingStack": 1000,
    "actionTimeoutSeconds": 30,
    "blindStructure": {
        "startingSmallBlind": 10,
        "increaseFactor": 1.5,
        "levelDurationSeconds": 600,
    },
}


def entry(player: str, status: EntrantStatus = EntrantStatus.PAID, **more: object) -> EntrantView:
    return EntrantView(
        player_id=player,
        owner_user_id=player,
        is_agent=False,
        status=status,
        **more,  # type: ignore[arg-type]
    )


def books(state: TournamentState) -> Books:
    inp = CreateTournamentInput(tournament_id="t", name="t", settings=SETTINGS)
    b = Books(inp, validate_settings(SETTINGS), state)
    b.deltas = True
    return b


def a_field() -> TournamentState:
    """Entries in registration order, one released (it left, and keeps its place should it
    come back), one re-entered after a bust (two finishes), stacks in another order than the
    entries (a table's seats), and a finish by place out of list order."""
    return TournamentState(
        tournament_id="t",
        name="t",
        entrants={
            "d": entry("d", seat=2),
            "gone": entry("gone", EntrantStatus.RELEASED, released_at_ms=5),
            "a": entry("a", seat=0, entry_no=2),
            "c": entry("c", seat=1),
            "b": entry("b"),
        },
        stacks={"a": 2500, "c": 1500, "d": 0, "b": 0},
        finishes=[
            Placing(player_id="a", place=5, rank=5, hand_number=3),
            Placing(player_id="b", place=3, rank=3, hand_number=9),
            Placing(player_id="d", place=4, rank=4, hand_number=7),
        ],
        version=12,
    )


def test_a_head_and_the_players_parts_are_the_whole_view() -> None:
    b = books(a_field())
    whole = b.view()
    again = compose(b.view(head=True), reversed(list(b.entrant_parts().values())))
    assert again == whole
    assert list(again.stacks) == list(whole.stacks) == ["a", "c", "d", "b"]
    assert [e.player_id for e in again.entrants] == ["d", "a", "c", "b"]
    assert [p.place for p in again.standings] == [3, 4, 5]


def test_a_publication_carries_the_players_that_changed_only() -> None:
    b = books(a_field())
    assert {p.player_id for p in b.changed_parts()} == {"d", "gone", "a", "c", "b"}
    assert b.changed_parts() == []
    # The books change entries in place: what was published is not changed with them.
    b.s.entrants["c"].seat = 3
    [moved] = b.changed_parts()
    assert moved.player_id == "c" and moved.entrant is not None and moved.entrant.seat == 3
    b.s.stacks["a"] = 2400
    b.s.finishes.append(Placing(player_id="c", place=2, rank=2, hand_number=11))
    assert {p.player_id for p in b.changed_parts()} == {"a", "c"}
    assert b.changed_parts() == []


def test_continue_as_new_hands_over_the_players_not_yet_published() -> None:
    b = books(a_field())
    b.changed_parts()
    b.s.stacks["c"] = 1400
    carried = b.carried().carry
    assert carried is not None and carried.dirty == ["c"]
    nxt = books(TournamentState.model_validate(carried.model_dump()))
    assert [p.player_id for p in nxt.changed_parts()] == ["c"]


def test_a_state_from_before_counts_every_player_as_changed() -> None:
    """A carried state without ``dirty`` (a run that published whole views): the first
    publication writes every player, since the store holds no rows of theirs."""
    state = a_field()
    assert state.dirty is None
    assert len(books(state).changed_parts()) == 5
    # A run on whole views hands over no list: its next run writes every player too.
    b = books(a_field())
    b.deltas = False
    carried = b.carried().carry
    assert carried is not None and carried.dirty is None


def test_the_cheap_comparison_of_parts_agrees_with_equality() -> None:
    """``same_part`` compares entries by their fields' values instead of the model's
    ``__eq__`` (the diff runs over every player at every publication): it must answer what
    ``==`` answers, for every field an entry has and for players without an entry."""
    base = entry("p", seat=1, entry_no=1)
    part: Part = (3, base, 1500, 2, (Placing(player_id="p", place=9, rank=9),))
    assert same_part(part, (3, base.model_copy(), 1500, 2, part[4]))
    changes = {
        "status": EntrantStatus.RELEASED,
        "seat": 2,
        "entry_no": 2,
        "released_at_ms": 7,
        "is_agent": True,
        "owner_user_id": "q",
    }
    for field, value in changes.items():
        other = base.model_copy(update={field: value})
        assert (other == base) is False, field
        assert not same_part(part, (3, other, 1500, 2, part[4])), field
    for i, value in ((0, 4), (2, 1400), (3, 0), (4, ())):
        changed = list(part)
        changed[i] = value
        assert not same_part(part, tuple(changed)), i  # type: ignore[arg-type]
    gone: Part = (-1, None, 0, 1, ())
    assert same_part(gone, (-1, None, 0, 1, ()))
    assert not same_part(gone, (-1, base, 0, 1, ()))
    assert not same_part((-1, base, 0, 1, ()), gone)
