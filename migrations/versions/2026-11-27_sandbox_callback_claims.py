"""sandbox callback claims

A sandbox callback is claimed by the delivery sending it, for a lease, so that parallel
sandbox requests of one company no longer each send the company's whole due backlog.

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-27 04:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sandbox_callbacks") as batch:
        batch.add_column(sa.Column("lock_token", sa.String(length=32), nullable=True))
        batch.add_column(
            sa.Column("locked_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("sandbox_callbacks") as batch:
        batch.drop_column("locked_until")
        batch.drop_column("lock_token")
