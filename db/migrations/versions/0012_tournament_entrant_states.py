"""tournament_entrant_states: each player's part of a tournament's pushed view, so the
workflow publishes a bounded head and the entrants that changed instead of the whole view
(issue 31, docs/read-model.md "The tournament's view in parts")

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament_entrant_states",
        sa.Column("tournament_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("entrant", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("stack", sa.BigInteger(), nullable=True),
        sa.Column("stack_ordinal", sa.Integer(), nullable=False),
        sa.Column("finishes", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "player_id"),
    )


def downgrade() -> None:
    op.drop_table("tournament_entrant_states")
