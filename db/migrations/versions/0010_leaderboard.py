"""leaderboard: each player's running totals (issue 29); the activity feed is a stream of the
event log and needs no table of its own

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 13:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leaderboard",
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("is_agent", sa.Boolean(), nullable=False),
        sa.Column("tournaments_played", sa.Integer(), nullable=False),
        sa.Column("tournaments_itm", sa.Integer(), nullable=False),
        sa.Column("net_chips", sa.BigInteger(), nullable=False),
        sa.Column("hands_played", sa.BigInteger(), nullable=False),
        sa.Column("biggest_pot", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("player_id"),
    )


def downgrade() -> None:
    op.drop_table("leaderboard")
