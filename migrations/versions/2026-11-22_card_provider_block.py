"""card provider block pending

A card blocked for an unpaid decline fee whose block the provider has not confirmed yet is
flagged, so the background job repeats the block until it holds.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-22 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "provider_block_pending",
                sa.Boolean(),
                server_default=sa.false(),
                nullable=False,
            )
        )
        batch_op.create_index(
            "ix_cards_provider_block_pending",
            ["provider_block_pending"],
            unique=False,
            postgresql_where=sa.text("provider_block_pending"),
            sqlite_where=sa.text("provider_block_pending"),
        )


def downgrade() -> None:
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.drop_index("ix_cards_provider_block_pending")
        batch_op.drop_column("provider_block_pending")
