"""The event models (wire/events.py) describe exactly what the logs carry.

What the golden tournament published before the models existed (its ``publish_event``
inputs, opened with the recording's codec key) must validate against the model of its type
and dump back to the same object: same keys, same values. A cash room's events are checked
the same way on a live room's log (tests/integration/test_rooms.py).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload

from core.settings import Settings
from core.temporal import data_converter
from wire.events import MTT_EVENTS, ROOM_EVENTS, TOURNAMENT_EVENTS, Event

GOLDEN = Path(__file__).parent / "histories" / "golden"
BY_TYPE = {model.TYPE: model for model in TOURNAMENT_EVENTS}


def renamed(payload: dict[str, Any]) -> dict[str, Any]:
    """The golden recording predates one naming rule: its hand numbers are ``handNo``, which
    the wire now spells ``handNumber`` (old payloads still read)."""
    out = {("handNumber" if k == "handNo" else k): v for k, v in payload.items()}
    if "finalStandings" in out:
        out["finalStandings"] = [renamed(p) for p in out["finalStandings"]]
    return out


def round_trips(model: type[Event], payload: dict[str, Any]) -> bool:
    return model.model_validate(payload).payload() == renamed(payload)


async def test_the_golden_tournament_published_what_the_models_describe() -> None:
    codec = data_converter(Settings(data_dir=GOLDEN, codec_key="")).payload_codec
    assert codec is not None
    history = json.loads((GOLDEN / "tournament.json").read_text())
    seen: dict[str, int] = {}
    for event in history["events"]:
        attrs = event.get("activityTaskScheduledEventAttributes")
        if not attrs or attrs["activityType"]["name"] != "publish_event":
            continue
        raw = attrs["input"]["payloads"][0]
        sealed = Payload(
            metadata={k: base64.b64decode(v) for k, v in raw["metadata"].items()},
            data=base64.b64decode(raw["data"]),
        )
        published = json.loads((await codec.decode([sealed]))[0].data)
        model = BY_TYPE[published["type"]]
        assert round_trips(model, published["payload"]), published
        seen[published["type"]] = seen.get(published["type"], 0) + 1
    # A whole tournament: every type but a settled payout's own event is in it at least once
    # (the demo's prizes are paid, so that one is there too).
    assert set(seen) == set(BY_TYPE), seen


def test_each_type_is_named_once_per_log() -> None:
    for models in ((*TOURNAMENT_EVENTS, *MTT_EVENTS), ROOM_EVENTS):
        types = [m.TYPE for m in models]
        assert len(types) == len(set(types)), types
