"""card funding provider call lease

One caller at a time asks the provider for a card funding's movement: the lease keeps a
settlement from repeating a call whose refusal the first caller is about to record.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "provider_call_until",
                finplat.db.types.UtcDateTime(timezone=True),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.drop_column("provider_call_until")
