"""card purchase follow-ups

A purchase decided on the card provider's real-time request is answered before its decline
fee and auto top-up run (they call the provider, which that answer cannot wait for): the
purchase carries when its follow-up is due, and the background job runs it.

Revision ID: 0038
Revises: 0037
Create Date: 2026-11-28 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("card_transactions") as batch:
        batch.add_column(
            sa.Column("follow_up_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True)
        )
        batch.create_index(
            "ix_card_transactions_follow_up",
            ["follow_up_at"],
            unique=False,
            postgresql_where=sa.text("follow_up_at IS NOT NULL"),
            sqlite_where=sa.text("follow_up_at IS NOT NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("card_transactions") as batch:
        batch.drop_index("ix_card_transactions_follow_up")
        batch.drop_column("follow_up_at")
