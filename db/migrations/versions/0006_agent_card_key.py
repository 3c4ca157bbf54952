"""agents.card_public_key: the X25519 key an agent's hole cards are sealed to (docs/fairness.md)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 19:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "agents",
        sa.Column("card_public_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("agents", "card_public_key")
