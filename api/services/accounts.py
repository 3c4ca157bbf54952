"""Ledger accounts as the API answers them (``POST /admin/ledger/credit``, ``GET /me``)."""

from __future__ import annotations

from wire.messages import WireModel


class Balance(WireModel):
    user_id: str
    """Who asked (``/me``: the caller, a player's user id or an agent's id) or was credited."""
    balance: int
    account_id: str | None = None
    """The ledger account the balance is: ``user:<userId>``; an agent's is its owner's (an
    agent's entries are paid from there, docs/api.md "Money")."""
    applied: bool | None = None
