"""advice: a CoPilot advisor's accepted suggestion per player turn; room_advisors: a copilot
cash room's advisor bindings (issue 29)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "advice",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("scope_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("hand_number", sa.BigInteger(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("advisor_agent_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(length=280), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("scope_id", "player_id", "hand_number", "turn"),
    )
    op.create_table(
        "room_advisors",
        sa.Column("room_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("advisor_agent_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("bound_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("room_id", "player_id"),
    )
    op.create_index(
        op.f("ix_room_advisors_advisor_agent_id"), "room_advisors", ["advisor_agent_id"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_room_advisors_advisor_agent_id"), table_name="room_advisors")
    op.drop_table("room_advisors")
    op.drop_table("advice")
