"""read_states: the pushed read model (each table's and tournament's newest published state)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 23:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "read_states",
        sa.Column("key", _str(length=120), nullable=False),
        sa.Column("kind", _str(length=20), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("public", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("private", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("read_states")
