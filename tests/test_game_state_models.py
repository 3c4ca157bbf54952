"""The served models (wire/game_state.py) describe exactly what the engine produces.

Every key of the engine's hand view, legal actions and hand record has a field in its model
(the views' models refuse an unknown key), and what the API serves is the engine's data with
camelCase keys: nothing dropped, nothing renamed but the case (and ``hand_no``, which the
wire calls ``handNumber`` everywhere). The hand records the golden tournament and room
stored are checked the same way.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel
from temporalio.api.common.v1 import Payload

from api.game_state import WatchedTournament, compose
from core.settings import Settings
from core.temporal import data_converter
from domain.deck import shuffled_deck
from domain.holdem import Hand, public_view
from tests.domain.builders import engine_record
from wire.game_state import GameState, HandRecord, HandView, LastHand
from wire.messages import TournamentPhase, TournamentView
from wire.table_messages import TableSeat, TableView

GOLDEN = Path(__file__).parent / "histories" / "golden"
# Keys whose values are keyed by seat or player, not by field name: their keys stay as they are.
BY_SEAT = {
    "blinds",
    "antes",
    "posted_blinds",
    "posted_antes",
    "stacks_before",
    "stacks_after",
    "hole_cards",
    "shown",
    "players",
    "winners",
    "net_to_winner",
    "netToWinner",
}


def camel(value: Any, key: str = "") -> Any:
    """The engine's data as the wire spells it."""
    if isinstance(value, dict):
        if key == "entry":  # an action: ``auto`` is null when the player acted
            value = {"auto": None, **value}
        if key in BY_SEAT:
            return {k: camel(v) for k, v in value.items()}
        return {
            ("handNumber" if k == "hand_no" else to_camel(k)): camel(v, k) for k, v in value.items()
        }
    if isinstance(value, list):
        return [camel(v, "entry" if key == "actions" else "") for v in value]
    return value


def played_hand(seed: int) -> tuple[Hand, list[dict[str, Any]]]:
    """A three-handed hand played at random to the end, and every seat's view on the way."""
    rng = random.Random(seed)
    hand = Hand.start(
        seats=[0, 1, 2],
        stacks=[300, 200, 100],
        blinds=[5, 10, 0],
        antes=[1, 1, 1],
        min_bet=10,
        deck=shuffled_deck(bytes([seed]) * 32),
    )
    views = []
    while not hand.over:
        views += [public_view(hand, seat) for seat in (None, 0, 1, 2)]
        legal = hand.legal_actions()
        assert legal is not None
        action = rng.choice(list(legal.actions))
        amount = legal.min_raise_to if action == "raise" else None
        entry = hand.act(legal.seat, action, amount)
        if rng.random() < 0.2:
            entry["auto"] = "timeout"
    views += [public_view(hand, seat) for seat in (None, 0, 1, 2)]
    return hand, views


def full_record(hand: Hand) -> dict[str, Any]:
    return engine_record(
        hand, small_blind=5, big_blind=10, ante=1, deck_commitment="ab" * 32, deck_seed="cd" * 32
    )


def test_every_view_and_record_of_many_hands_is_served_whole_in_camel_case() -> None:
    for seed in range(60):
        hand, views = played_hand(seed)
        for view in views:
            served = camel(view)
            for p in served["players"]:  # set by the API for an agent with a card key only
                p["sealedHoleCards"] = None
            assert HandView.model_validate(view).to_wire() == served
        record = full_record(hand)
        assert HandRecord.model_validate(record).to_wire() == camel(record)
        last = {k: record[k] for k in LastHand.model_fields if k in record}
        last["hand_no"] = record["hand_no"]
        assert LastHand.model_validate(last).to_wire() == camel(last)


def test_a_game_state_is_camel_case_all_the_way_down() -> None:
    hand, _ = played_hand(3)
    table = TableView(
        table_id="room-1",
        tournament_id=None,
        hand_no=4,
        level=1,
        small_blind=5,
        big_blind=10,
        ante=1,
        deck_commitment=None,
        version=9,
        seats=[TableSeat(seat=s, player_id=p, stack=100) for s, p in enumerate("abc")],
        hand=public_view(hand, 1),
        last_hand=None,
    )
    state = compose(9, table, viewer="b", tournament=None).to_wire()
    GameState.model_validate(state)

    def keys(value: Any, key: str = "") -> set[str]:
        if isinstance(value, dict):
            mine = set() if key in BY_SEAT else set(value)
            return mine | {k for name, v in value.items() for k in keys(v, name)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    assert not {k for k in keys(state) if "_" in k}, state
    assert state["you"]["playerId"] == "b" and "tournament" not in state


async def _golden_inputs(name: str, activity: str) -> list[dict[str, Any]]:
    codec = data_converter(Settings(data_dir=GOLDEN, codec_key="")).payload_codec
    assert codec is not None
    history = json.loads((GOLDEN / f"{name}.json").read_text())
    found = []
    for event in history["events"]:
        attrs = event.get("activityTaskScheduledEventAttributes")
        if not attrs or attrs["activityType"]["name"] != activity:
            continue
        raw = attrs["input"]["payloads"][0]
        sealed = Payload(
            metadata={k: base64.b64decode(v) for k, v in raw["metadata"].items()},
            data=base64.b64decode(raw["data"]),
        )
        found.append(json.loads((await codec.decode([sealed]))[0].data))
    return found


async def test_the_hand_records_the_golden_tournament_stored_are_served_whole() -> None:
    rows = [r for r in await _golden_inputs("tournament", "record_hand") if r["handNo"] > 0]
    assert rows
    for row in rows:
        record = row["record"]
        assert HandRecord.model_validate(record).to_wire() == camel(record)


def test_a_socket_frame_around_a_rendered_body_is_the_text_send_json_wrote() -> None:
    """The WebSocket sends a game state's body as the read model rendered it
    (api/routes/player_stream.py ``frame``): the frame is the very text Starlette's
    ``send_json`` wrote for the parsed message, non-ASCII names and escapes included."""
    from api.routes.player_stream import frame

    for data in (
        {"version": 3, "you": None, "seats": [{"playerId": "Zoë ☃", "stack": 1.5}]},
        {"name": 'quote " backslash \\ newline \n \\u0041 literal', "empty": ""},
    ):
        body = json.dumps(data, separators=(",", ":")).encode()  # as GameStateCache.render
        message = {"id": "12-34", "event": "game_state", "data": data}
        assert frame("12-34", "game_state", body) == json.dumps(
            message, separators=(",", ":"), ensure_ascii=False
        )


def test_a_bust_an_mtt_holds_unplaced_reads_eliminated() -> None:
    """During an MTT's late registration a bust is placed only at the window's close
    (docs/mtt.md): until then the busted entry's game state says ``eliminated`` with no place
    (it may re-enter), though no table seats it. (It read no ``you`` at all, and the SDK's bots
    never learned they were out, so none ever re-entered: ``sng demo --re-entries``.)"""
    hand, _ = played_hand(5)
    table = TableView(
        table_id="table-t-1",
        tournament_id="t",
        hand_no=7,
        level=1,
        small_blind=5,
        big_blind=10,
        ante=0,
        deck_commitment=None,
        version=12,
        seats=[TableSeat(seat=s, player_id=p, stack=1000) for s, p in enumerate("abc")],
        hand=public_view(hand, 1),
        last_hand=None,
    )
    settings = {
        "seats": 3,
        "maxEntrants": 12,
        "minEntrants": 4,
        "entryFee": 100,
        "startingStack": 1000,
        "actionTimeoutSeconds": 30,
        "lateRegistrationSeconds": 120,
        "maxReEntries": 1,
        "blindStructure": {
            "startingSmallBlind": 5,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 600,
        },
    }
    view = TournamentView(
        tournament_id="t",
        name="t",
        state=TournamentPhase.PLAYING,
        kind="sng",
        seats=3,
        entry_fee=100,
        starting_stack=1000,
        registered_count=4,
        field_size=4,
        play_start_ms=0,
        current_level=1,
        stacks={"a": 1500, "b": 1000, "c": 1500, "d": 0},
        settings=settings,
        entrants=[],
        version=30,
    )
    tournament = WatchedTournament.of(view)
    out = compose(42, table, viewer="d", tournament=tournament).you
    assert out is not None and (out.status, out.place, out.seat) == ("eliminated", None, None)
    # Those still in are as before; a spectator has no ``you``.
    seated = compose(42, table, viewer="b", tournament=tournament).you
    assert seated is not None and seated.status == "playing"
    assert compose(42, table, viewer="z", tournament=tournament).you is None
