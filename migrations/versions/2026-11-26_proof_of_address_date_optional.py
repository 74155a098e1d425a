"""proof of address date optional

The spec's personal onboarding form has no date for the proof of address; the date is kept
when the caller states it and is null otherwise.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bankprov_applications", schema=None) as batch_op:
        batch_op.alter_column("proof_of_address_date", existing_type=sa.Date(), nullable=True)


def downgrade() -> None:
    # An application without a stated date keeps the day it was made as its date.
    # (`DATE(x)` reads a day from a timestamp on both SQLite and PostgreSQL.)
    op.execute(
        "UPDATE bankprov_applications SET proof_of_address_date = DATE(created_at) "
        "WHERE proof_of_address_date IS NULL"
    )
    with op.batch_alter_table("bankprov_applications", schema=None) as batch_op:
        batch_op.alter_column("proof_of_address_date", existing_type=sa.Date(), nullable=False)
