"""The search attributes operators filter on in the Temporal UI, kept current by the workflows."""

from __future__ import annotations

from typing import Any

from temporalio.common import SearchAttributeKey

TOURNAMENT_STATE = SearchAttributeKey.for_keyword("TournamentState")
TABLE_KIND = SearchAttributeKey.for_keyword("TableKind")
SEATS = SearchAttributeKey.for_int("Seats")
ENTRY_FEE = SearchAttributeKey.for_int("EntryFee")
CURRENT_LEVEL = SearchAttributeKey.for_int("CurrentLevel")

ALL: tuple[SearchAttributeKey[Any], ...] = (
    TOURNAMENT_STATE,
    TABLE_KIND,
    SEATS,
    ENTRY_FEE,
    CURRENT_LEVEL,
)


def dev_server_flags() -> list[str]:
    """``--search-attribute Name=Type`` flags for ``temporal server start-dev``."""
    kinds = {"KEYWORD": "Keyword", "INT": "Int"}
    return [
        arg
        for key in ALL
        for arg in ("--search-attribute", f"{key.name}={kinds[key.indexed_value_type.name]}")
    ]
