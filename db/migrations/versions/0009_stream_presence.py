"""stream_presence: when a seated player's stream dropped (the disconnect grace, issue 28)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stream_presence",
        sa.Column("table_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("dropped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "player_id"),
    )


def downgrade() -> None:
    op.drop_table("stream_presence")
