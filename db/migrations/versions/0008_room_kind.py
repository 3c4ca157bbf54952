"""rooms.kind: a cash room's audience (open, human_only, agent, copilot), as a tournament's

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rooms opened before audiences seated everyone: they are "open".
    op.add_column(
        "rooms",
        sa.Column(
            "kind",
            sqlmodel.sql.sqltypes.AutoString(length=20),
            nullable=False,
            server_default="open",
        ),
    )


def downgrade() -> None:
    op.drop_column("rooms", "kind")
