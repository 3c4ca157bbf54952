"""wallets: sign-in-with-Ethereum challenges and the wallets bound to accounts

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 16:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "wallet_challenges",
        sa.Column("nonce", _str(length=32), nullable=False),
        sa.Column("user_id", _str(length=100), nullable=False),
        sa.Column("address", _str(length=42), nullable=False),
        sa.Column("message", _str(length=2000), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("nonce"),
    )
    op.create_index(
        op.f("ix_wallet_challenges_user_id"), "wallet_challenges", ["user_id"], unique=False
    )
    op.create_table(
        "wallet_bindings",
        sa.Column("address", _str(length=42), nullable=False),
        sa.Column("user_id", _str(length=100), nullable=False),
        sa.Column("bound_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("address"),
    )
    op.create_index(
        op.f("ix_wallet_bindings_user_id"), "wallet_bindings", ["user_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_wallet_bindings_user_id"), table_name="wallet_bindings")
    op.drop_table("wallet_bindings")
    op.drop_index(op.f("ix_wallet_challenges_user_id"), table_name="wallet_challenges")
    op.drop_table("wallet_challenges")
