"""advice: keyed by table as well (security review 3, S8): an MTT's tables number their hands
each on their own, so a player moved to another table was shown advice stored for the old
table's hand of the same number and turn, and the advisor's real advice was refused

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "advice",
        sa.Column(
            "table_id",
            sqlmodel.sql.sqltypes.AutoString(length=120),
            nullable=False,
            server_default="",
        ),
    )
    op.drop_constraint("advice_scope_id_player_id_hand_number_turn_key", "advice", type_="unique")
    op.create_unique_constraint(
        "advice_scope_id_table_id_player_id_hand_number_turn_key",
        "advice",
        ["scope_id", "table_id", "player_id", "hand_number", "turn"],
    )


def downgrade() -> None:
    op.drop_constraint(
        "advice_scope_id_table_id_player_id_hand_number_turn_key", "advice", type_="unique"
    )
    op.execute(
        "DELETE FROM advice a USING advice b WHERE a.id > b.id AND a.scope_id = b.scope_id"
        " AND a.player_id = b.player_id AND a.hand_number = b.hand_number AND a.turn = b.turn"
    )
    op.create_unique_constraint(
        "advice_scope_id_player_id_hand_number_turn_key",
        "advice",
        ["scope_id", "player_id", "hand_number", "turn"],
    )
    op.drop_column("advice", "table_id")
