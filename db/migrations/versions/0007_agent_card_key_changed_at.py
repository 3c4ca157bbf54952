"""agents.card_key_changed_at: when the Agent Card's key last changed (security review N8)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 08:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "agents", sa.Column("card_key_changed_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("agents", "card_key_changed_at")
