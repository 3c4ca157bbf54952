"""The migrated schema is exactly the models', and the keys idempotent writes rely on hold."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

import db.models  # noqa: F401 - registers the tables
from db.engine import Database


async def test_migrations_match_the_models(db: Database) -> None:
    async with db.engine.connect() as conn:
        diff = await conn.run_sync(
            lambda sync: compare_metadata(
                MigrationContext.configure(sync, opts={"compare_type": True}), SQLModel.metadata
            )
        )
    assert diff == []


async def test_payout_intent_is_unique_per_tournament_and_position(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO tournaments (id, name, kind, seats, entry_fee, rake_fee, starting_stack,"
                " settings, state, workflow_id, registered_count, current_level, created_at,"
                " updated_at)"
                " VALUES ('uniq-1', 'u', 'open', 2, 100, 0, 1500, '{}', 'ended', 'tournament-uniq-1',"
                " 2, 0, now(), now()) ON CONFLICT DO NOTHING"
            )
        )
        insert = text(
            "INSERT INTO payout_intents (id, tournament_id, position, player_id, amount,"
            " destination, status, created_at) VALUES (:id, 'uniq-1', 1, 'p', 200, 'acct', "
            "'pending', now())"
        )
        await conn.execute(insert, {"id": "uniq-1:1"})
    with pytest.raises(IntegrityError):
        async with db.engine.begin() as conn:
            await conn.execute(insert, {"id": "uniq-1:1-again"})


async def test_ledger_balance_cannot_go_negative(db: Database) -> None:
    with pytest.raises(IntegrityError):
        async with db.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO ledger_accounts (id, kind, balance, allow_negative, created_at)"
                    " VALUES ('user:neg', 'user', -1, false, now())"
                )
            )
