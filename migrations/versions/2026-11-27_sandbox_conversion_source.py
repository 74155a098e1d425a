"""sandbox conversion source

Where the coins a sandbox rail conversion sells come from: the rail's custody, or the card
provider (a card-provider-to-banking-provider transfer), so that the rail's custody balance
counts only the sales of coins it held.

Revision ID: 0036
Revises: 0034
Create Date: 2026-11-27 02:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0036"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sandbox_crypto_conversions") as batch:
        batch.add_column(
            sa.Column("source", sa.String(length=16), nullable=False, server_default="custody")
        )


def downgrade() -> None:
    with op.batch_alter_table("sandbox_crypto_conversions") as batch:
        batch.drop_column("source")
