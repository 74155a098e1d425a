"""retrying webhook deliveries

A delivery whose attempt failed and whose next attempt is scheduled is `retrying`, no longer
`pending` (which now means not attempted yet). Only automatic retries left a queued delivery
with attempts behind it (a manual retry of a failed delivery starts again at 0), so those are
the rows that change.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "UPDATE webhook_deliveries SET status = 'retrying' "
        "WHERE status = 'pending' AND attempts > 0"
    )


def downgrade() -> None:
    op.execute("UPDATE webhook_deliveries SET status = 'pending' WHERE status = 'retrying'")
