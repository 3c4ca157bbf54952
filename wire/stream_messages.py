"""The bodies of the per-player streams' own messages (docs/events.md), beside the log events
(``wire/events.py``), the game state (``wire/game_state.py``) and the act and seed answers
(``wire/table_messages.py``): what the API sends and what the WebSocket's AsyncAPI document
(``GET /asyncapi.json``, ``api/ws_protocol.py``) describes, one model each.

>>> StreamError(code="rate_limited", message="m", dropped=Dropped(index=3, type="act")).to_wire()
{'code': 'rate_limited', 'message': 'm', 'dropped': {'index': 3, 'type': 'act'}}
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field, JsonValue

from wire.base import Served
from wire.game_state import HAND_NUMBER, GameState, LegalActions

DOCUMENTED = ConfigDict(use_attribute_docstrings=True)
"""Each field's docstring is its description in the schema (``GET /asyncapi.json``)."""


class ActionRequired(Served):
    """Your turn: sent once per turn, right after the ``game_state`` that shows it."""

    model_config = DOCUMENTED

    hand_number: int = HAND_NUMBER
    turn: int
    """Send it back in your ``act``."""
    legal_actions: LegalActions | None
    deadline: int | None
    """When your decision time runs out (epoch ms)."""
    stack: int | None
    """Your chips behind."""


class AgentCardChanged(Served):
    """An agent's stream: its Agent Card's key was put on, replaced or taken off."""

    model_config = DOCUMENTED

    agent_id: str
    public_key: str | None
    """The card's key now (``null``: taken off)."""
    card_key_changed_at: datetime | None


class Dropped(Served):
    """Which message of the client's a ``rate_limited`` refusal dropped."""

    model_config = DOCUMENTED

    index: int = Field(ge=1)
    """Its place among the messages the client sent on this socket (the first is 1): names it
    even when it had no ``requestId``, or was not JSON."""
    type: str | None
    """Its ``type``, when it was a JSON object with a string ``type`` (``null`` otherwise)."""
    request_id: JsonValue = None
    """Its ``requestId``, when it had one."""

    ABSENT_WHEN_NULL = frozenset({"request_id"})


class StreamError(Served):
    """A refusal on the WebSocket: the HTTP refusals' ``{code, message, field?}`` (the same
    codes, docs/api.md), answering the message that caused it (the frame echoes its
    ``requestId``). Nothing changed."""

    model_config = DOCUMENTED

    code: str
    """A refusal code of docs/api.md's catalogue (``stale_turn``, ``validation_error``, …)."""
    message: str
    field: str | None = None
    """The message's key at fault, when one is."""
    retry_after_seconds: int | None = None
    """``rate_limited``: when the limit lets another message through."""
    dropped: Dropped | None = None
    """``rate_limited``: the message the limit dropped (it never reached the table)."""

    ABSENT_WHEN_NULL = frozenset({"field", "retry_after_seconds", "dropped"})

    def to_wire(self) -> dict[str, Any]:
        wire = super().to_wire()
        if self.dropped is not None:
            wire["dropped"] = self.dropped.to_wire()
        return wire


# -- CoPilot (docs/copilot.md) ------------------------------------------------------------
REASON_MAX = 280
"""The longest reason an advice may give (characters)."""


class Advice(Served):
    """CoPilot: your advisor's suggestion for your current turn, sent after that turn's
    ``action_required`` (and again after it when your stream reconnects during the turn). A
    suggestion only: you decide, and your clock runs as it would without it."""

    model_config = DOCUMENTED

    hand_number: int = HAND_NUMBER
    turn: int
    action: str
    """One of the turn's ``legalActions.actions``."""
    amount: int | None
    """The raise-to amount for ``raise`` (within ``minRaiseTo`` .. ``maxRaiseTo``), else null."""
    reason: str = Field(max_length=REASON_MAX)
    advisor_agent_id: str


class AdviceRequest(Served):
    """CoPilot, on the advisor's socket: a player you advise is to act. ``gameState`` is that
    player's own game state (their hole cards, the public table, the tournament view), never
    another player's cards. Answer with ``advice`` before the ``deadline``; the player's clock
    does not wait for you."""

    model_config = DOCUMENTED

    request_id: str
    """Echo it in your ``advice`` (optional: ``handNumber`` and ``turn`` name the turn too)."""
    player_id: str
    """The player you advise."""
    hand_number: int = HAND_NUMBER
    turn: int
    deadline: int | None
    """When the player's decision time runs out (epoch ms)."""
    legal_actions: LegalActions | None
    game_state: GameState
    """The player's game state (the ``GET …/game-state`` body they get)."""

    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), "gameState": self.game_state.to_wire()}


class AdviceResult(Served):
    """Your ``advice`` was accepted and is on its way to the player."""

    model_config = DOCUMENTED

    ok: bool
    player_id: str
    hand_number: int = HAND_NUMBER
    turn: int
