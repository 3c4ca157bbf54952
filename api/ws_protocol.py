"""The per-player WebSocket's protocol as a schema: an AsyncAPI 3 document served at
``GET /asyncapi.json`` (docs/events.md), built from the models the server sends and parses.

Every message either way is one model here, and every model's JSON Schema is pydantic's
(``by_alias``: the wire's camelCase names, so a field renamed in a model is renamed in the
document): nothing in the document is a hand-written field list.

- Server to client, ``{"id", "event", "data"}``: the log's events (``wire/events.py``: a
  tournament's on the tournament socket, a room's on the room socket; both have a
  ``hand_result``, each its own), ``game_state`` (``wire.game_state.GameState``),
  ``action_required`` and ``agent_card_changed`` (``wire/stream_messages.py``).
- Answers to the client's messages, ``{"event", "data", "requestId"?}`` (no ``id``: they
  are not in the log): ``act_result``, ``seed_result``, ``error``
  (``wire.stream_messages.StreamError``; ``rate_limited`` names the message it dropped).
- ``{"event": "end"}`` after the stream's final event; the server then closes.
- Client to server: ``act`` and ``seed`` (``CLIENT_MESSAGES``): the route parses each with
  its model here, so what the document describes is what the server accepts.
- The CoPilot advisor's sockets (``/tournaments/{id}/advisor/ws``,
  ``/rooms/{id}/advisor/ws``, docs/copilot.md):
  ``advice_request`` to the advisor, ``advice`` (``AdviceAnswer``) back, answered by
  ``advice_result`` or an ``error``; the player's own sockets carry the accepted ``advice``.

``tests/integration/test_ws_schema.py`` plays a tournament and a room over real sockets and
validates every frame the server sent against this document, failing on an event it does
not describe.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from api.services.play import ActBody, SeedBody
from wire.base import WireModel
from wire.events import MTT_EVENTS, ROOM_EVENTS, TOURNAMENT_EVENTS, Event
from wire.game_state import GameState
from wire.stream_messages import (
    REASON_MAX,
    ActionRequired,
    Advice,
    AdviceRequest,
    AdviceResult,
    AgentCardChanged,
    StreamError,
)
from wire.table_messages import ActResult, SeedResult

ASYNCAPI_VERSION = "3.0.0"
REF = "#/components/schemas/{model}"
STREAM_ID = r"^[0-9]+-(-1|[0-9]+)$"
"""A streamed message's id, ``<log id>-<game-state version>`` (``-1``: no state sent yet)."""


# -- client to server ---------------------------------------------------------------------
class ActRequest(ActBody):
    """Act on your turn (``POST …/act``'s body and rules): answered by ``act_result`` or an
    ``error``."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: Literal["act"]
    request_id: JsonValue = None
    """Any JSON value: the answer echoes it."""
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=64, strict=True)
    """Optional, as the HTTP ``Idempotency-Key``: a retry with it gets the first answer."""


class SeedRequest(SeedBody):
    """Your seed for the next hand's deal (``POST …/seed``, docs/fairness.md): answered by
    ``seed_result`` or an ``error``."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: Literal["seed"]
    request_id: JsonValue = None
    """Any JSON value: the answer echoes it."""


CLIENT_MESSAGES: dict[str, type[ActRequest] | type[SeedRequest]] = {
    "act": ActRequest,
    "seed": SeedRequest,
}
"""What a client may send, by ``type``; anything else is an ``error`` ``validation_error``."""


class AdviceAnswer(WireModel):
    """CoPilot, the advisor's answer to an ``advice_request`` (docs/copilot.md): a suggestion
    for the advised player's current turn, checked like an action (the turn is current, the
    action legal, a raise's amount in range) and answered by ``advice_result`` or an ``error``.
    It never acts: the player decides."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: Literal["advice"]
    request_id: JsonValue = None
    """The ``advice_request``'s ``requestId`` (echoed in the answer)."""
    player_id: str | None = Field(default=None, min_length=1, max_length=120)
    """The player advised; optional when you advise one player here, or the ``requestId``
    names them."""
    hand_number: int = Field(ge=1, le=2**31 - 1)
    turn: int = Field(ge=0, le=2**31 - 1)
    action: Literal["fold", "check", "call", "raise", "all_in"]
    """One of the turn's ``legalActions.actions``."""
    amount: int | None = Field(default=None, ge=1, le=10**15, strict=True)
    """For ``raise`` only: the total to raise to (``minRaiseTo`` .. ``maxRaiseTo``)."""
    reason: str = Field(min_length=1, max_length=REASON_MAX)
    """Why, in a sentence the player reads (at most 280 characters)."""


ADVISOR_MESSAGES: dict[str, type[BaseModel]] = {"advice": AdviceAnswer}
"""What an advisor may send (``act`` and ``seed`` are refused ``advisor_cannot_act``)."""


# -- server to client ---------------------------------------------------------------------
Kind = Literal["stream", "answer", "push", "end"]

STREAMED: dict[str, type[BaseModel]] = {
    "game_state": GameState,
    "action_required": ActionRequired,
    "agent_card_changed": AgentCardChanged,
    "advice": Advice,
}
"""The player's own messages besides the log's events (both sockets)."""
ANSWERS: dict[str, type[BaseModel]] = {
    "act_result": ActResult,
    "seed_result": SeedResult,
    "error": StreamError,
}
"""The answers to a client's messages (and ``error`` for one the rate limit dropped)."""


def _envelope(name: str, event: str, data: type[BaseModel] | None, kind: Kind) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    if kind == "stream":
        fields["id"] = (
            str,
            Field(pattern=STREAM_ID, description="Resume after it with `?after=`."),
        )
    fields["event"] = (Literal[event], Field(description="What `data` is."))
    if data is not None:
        fields["data"] = (data, ...)
    if kind == "answer":
        fields["request_id"] = (
            JsonValue,
            Field(
                default=None,
                alias="requestId",
                description="The `requestId` of the message this answers, when it had one.",
            ),
        )
    model: type[BaseModel] = create_model(
        name, __config__=ConfigDict(extra="forbid", title=name), **fields
    )
    model.__doc__ = (data.__doc__ if data is not None else None) or f"The `{event}` message."
    return model


COMMON: dict[str, type[BaseModel]] = {
    **{k: _envelope(f"{m.__name__}Message", k, m, "stream") for k, m in STREAMED.items()},
    **{k: _envelope(f"{m.__name__}Message", k, m, "answer") for k, m in ANSWERS.items()},
    "end": _envelope("EndMessage", "end", None, "end"),
}
"""The messages both sockets send, by ``event``."""


def _server_messages(events: tuple[type[Event], ...]) -> dict[str, type[BaseModel]]:
    log = {e.TYPE: _envelope(f"{e.__name__}Message", e.TYPE, e, "stream") for e in events}
    return log | COMMON


ADVISOR_ANSWERS: dict[str, type[BaseModel]] = {"advice_result": AdviceResult, "error": StreamError}
"""The answers to an advisor's messages."""

ADVISOR_SENT: dict[str, type[BaseModel]] = {
    "advice_request": _envelope("AdviceRequestMessage", "advice_request", AdviceRequest, "push"),
    "advice_result": _envelope("AdviceResultMessage", "advice_result", AdviceResult, "answer"),
    "error": COMMON["error"],
    "end": COMMON["end"],
}
"""The advisor socket's messages from the server: requests are not in the log (no ``id``)."""

SERVER_MESSAGES: dict[str, dict[str, type[BaseModel]]] = {
    "tournamentPlayer": _server_messages((*TOURNAMENT_EVENTS, *MTT_EVENTS)),
    "roomPlayer": _server_messages(ROOM_EVENTS),
    "tournamentAdvisor": ADVISOR_SENT,
    "roomAdvisor": ADVISOR_SENT,
}
"""Each socket's messages from the server, by ``event``."""

RECEIVED: dict[str, dict[str, type[BaseModel]]] = {
    "tournamentPlayer": dict(CLIENT_MESSAGES),
    "roomPlayer": dict(CLIENT_MESSAGES),
    "tournamentAdvisor": ADVISOR_MESSAGES,
    "roomAdvisor": ADVISOR_MESSAGES,
}
"""Each socket's messages from the client, by ``type``."""
ADVISORS = frozenset({"tournamentAdvisor", "roomAdvisor"})
"""The advisor channels (no resuming: a request is for the turn at hand)."""
REPLIES: dict[str, dict[str, type[BaseModel]]] = {
    "tournamentPlayer": ANSWERS,
    "roomPlayer": ANSWERS,
    "tournamentAdvisor": ADVISOR_ANSWERS,
    "roomAdvisor": ADVISOR_ANSWERS,
}

CHANNELS: dict[str, dict[str, Any]] = {
    "tournamentPlayer": {
        "address": "/tournaments/{tournamentId}/me/ws",
        "title": "A player's tournament socket",
        "parameters": {"tournamentId": {"description": "The tournament's id."}},
    },
    "roomPlayer": {
        "address": "/rooms/{roomId}/me/ws",
        "title": "A player's cash-room socket",
        "parameters": {"roomId": {"description": "The room's id."}},
    },
    "tournamentAdvisor": {
        "address": "/tournaments/{tournamentId}/advisor/ws",
        "title": "A CoPilot advisor agent's socket (docs/copilot.md)",
        "parameters": {"tournamentId": {"description": "The tournament's id."}},
    },
    "roomAdvisor": {
        "address": "/rooms/{roomId}/advisor/ws",
        "title": "A CoPilot advisor agent's socket at a cash room (docs/copilot.md)",
        "parameters": {"roomId": {"description": "The room's id."}},
    },
}

DESCRIPTION = """\
A player's (or an agent's) own stream of a tournament or a cash room, on which it can also act
(docs/events.md). Each frame is one JSON text message. The handshake carries the same
credentials as the HTTP API (`Authorization: Bearer <token>` or `X-Agent-Key`); `?after=<id>`
resumes after a streamed message's `id`. A CoPilot advisor agent has a socket of its own per
tournament or cash room (`tournamentAdvisor`, `roomAdvisor`, docs/copilot.md): it is asked
for advice on each turn of the player it advises and answers with `advice`; it never acts.

Close codes: 4401 no valid credential, or it expired or was revoked while open; 4403 (advisor
socket) not an agent, or an agent that advises no player there; 4404 no such
tournament or room; 4429 too many streams, or the handshake over the rate limit; 1008
`too_slow` (the client read nothing for 30 s while its socket was full). A message over the
rate limit is answered with an `error` `rate_limited` naming it (`dropped`) and never reaches
the table.

Generated from the server's models (api/ws_protocol.py); the same document for every caller
until the service is upgraded."""


def _summary(model: type[BaseModel]) -> str:
    return (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")


def asyncapi_document(version: str) -> dict[str, Any]:
    """The AsyncAPI 3 document of both sockets, its schemas pydantic's (JSON Schema)."""
    named: dict[type[BaseModel], str] = {
        m: k for received in RECEIVED.values() for k, m in received.items()
    }
    modes: list[tuple[type[BaseModel], JsonSchemaMode]] = [(m, "validation") for m in named]
    for sent_here in SERVER_MESSAGES.values():
        for event, model in sent_here.items():
            if model not in named:
                named[model] = event
                modes.append((model, "serialization"))
    keys, defs = models_json_schema(modes, by_alias=True, ref_template=REF)
    schemas: dict[str, Any] = defs.get("$defs", {})
    components = {
        model.__name__: {
            "name": named[model],
            "title": model.__name__,
            "summary": _summary(model),
            "contentType": "application/json",
            "payload": keys[(model, mode)],
        }
        for model, mode in modes
    }

    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for channel, spec in CHANNELS.items():
        sent = SERVER_MESSAGES[channel]
        messages: dict[str, dict[str, str]] = {
            k: {"$ref": f"#/components/messages/{m.__name__}"}
            for k, m in [*sent.items(), *RECEIVED[channel].items()]
        }
        channels[channel] = {
            **spec,
            "messages": messages,
            "bindings": {}
            if channel in ADVISORS
            else {
                "ws": {
                    "query": {
                        "type": "object",
                        "properties": {
                            "after": {
                                "type": "string",
                                "maxLength": 40,
                                "description": "Resume after this message id.",
                            }
                        },
                    },
                    "bindingVersion": "0.1.0",
                }
            },
        }
        here = {"$ref": f"#/channels/{channel}"}

        def refs(names: list[str], channel: str = channel) -> list[dict[str, str]]:
            return [{"$ref": f"#/channels/{channel}/messages/{name}"} for name in names]

        cap = channel[0].upper() + channel[1:]
        operations[f"send{cap}Messages"] = {
            "action": "send",
            "channel": here,
            "title": "The stream",
            "summary": (
                "A request for advice on each turn of a player you advise; then `end`."
                if channel in ADVISORS
                else "Events, your game state and your turns, in order; then `end`."
            ),
            "messages": refs([k for k in sent if k not in REPLIES[channel]]),
        }
        operations[f"receive{cap}Requests"] = {
            "action": "receive",
            "channel": here,
            "title": "Your requests",
            "summary": (
                "Advice; each is answered, echoing its `requestId`."
                if channel in ADVISORS
                else "Act or seed; each is answered, echoing its `requestId`."
            ),
            "messages": refs(list(RECEIVED[channel])),
            "reply": {"channel": here, "messages": refs(list(REPLIES[channel]))},
        }

    return {
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "SnG player streams (WebSocket)",
            "version": version,
            "description": DESCRIPTION,
        },
        "defaultContentType": "application/json",
        "channels": channels,
        "operations": operations,
        "components": {"schemas": schemas, "messages": components},
    }
