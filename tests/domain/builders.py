"""Builders shared by the domain tests: a valid settings dict to vary one field at a time."""

from __future__ import annotations

from typing import Any


def valid_settings_dict(**overrides: Any) -> dict[str, Any]:
    """A valid wire settings dict (camelCase), with any top-level field replaced."""
    raw: dict[str, Any] = {
        "seats": 9,
        "entryFee": 110,
        "rakeFee": 10,
        "startingStack": 1500,
        "actionTimeoutSeconds": 30,
        "blindStructure": {
            "startingSmallBlind": 10,
            "increaseFactor": 1.5,
            "levelDurationSeconds": 300,
        },
        "kind": "open",
    }
    raw.update(overrides)
    return {k: v for k, v in raw.items() if v is not ...}
