"""One family of base models for everything that crosses a boundary (issue 28).

Every field has a snake_case name in Python and its camelCase alias on the wire (``to_camel``);
both names read (``populate_by_name``), so a payload written either way still validates.

- :class:`WireModel`: the workflows' and activities' messages, and the API's request bodies.
  Mutable; a key it does not know is ignored (a history written by a newer version still
  reads). The data converter writes its Temporal payloads by alias (``pydantic_core.to_json``)
  and reads either name; ``model_dump()`` in code keeps the Python names (the read store's
  rows, the engine's dicts), so this config never changes: it is what running workflows carry
  and recorded histories hold. The API serves a message by alias (``response_model_by_alias``).
- :class:`Served`: what the API only serves (the game state, the hand record, the events'
  bodies). A key it does not know is refused, so the schema cannot fall behind what is served,
  and it serialises by alias: the wire form is the only form it has.

The tournament settings' base is ``domain.settings.StrictWireModel`` (frozen, unknown keys
refused, the same names): the domain sits below ``wire`` and validates them itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import AliasChoices, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

HAND_NUMBER = AliasChoices("handNumber", "hand_number", "handNo", "hand_no")
"""Every hand number is ``handNumber`` on the wire; the engine's dicts call it ``hand_no``, and
payloads written before that rule spelt it ``handNo``: they still read (a running workflow's
carried state, a recorded history, a stored hand). The wire name comes first: a schema of what
is read names the first choice."""


class WireModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=False)


class Served(WireModel):
    """Read by field name from the engine's dicts, written camelCase; a key the model does
    not know is refused, so the schema cannot fall behind what is served."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True)

    ABSENT_WHEN_NULL: ClassVar[frozenset[str]] = frozenset()
    """Optional fields left out of the wire form while unset (not written as null)."""

    def to_wire(self) -> dict[str, Any]:
        unset = {k for k in self.ABSENT_WHEN_NULL if getattr(self, k) is None}
        return self.model_dump(mode="json", by_alias=True, exclude=unset)
