"""rooms: the cash rooms' read model and their presence (connection and observer) table

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 19:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "rooms",
        sa.Column("id", _str(length=64), nullable=False),
        sa.Column("name", _str(length=200), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("entry", sa.BigInteger(), nullable=False),
        sa.Column("small_blind", sa.BigInteger(), nullable=False),
        sa.Column("big_blind", sa.BigInteger(), nullable=False),
        sa.Column("speed", _str(length=10), nullable=False),
        sa.Column("decision_timeout", sa.Integer(), nullable=False),
        sa.Column("disconnect_grace", sa.Integer(), nullable=False),
        sa.Column("status", _str(length=20), nullable=False),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("players", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("workflow_id", _str(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_rooms_status"), "rooms", ["status"], unique=False)
    op.create_table(
        "room_presence",
        sa.Column("room_id", _str(length=64), nullable=False),
        sa.Column("viewer", _str(length=120), nullable=False),
        sa.Column("seated", sa.Boolean(), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("room_id", "viewer"),
    )


def downgrade() -> None:
    op.drop_table("room_presence")
    op.drop_index(op.f("ix_rooms_status"), table_name="rooms")
    op.drop_table("rooms")
