"""referral reward vouchers

A reward of a programme delivering `VOUCHER` carries the voucher assigned to its beneficiary
when it was released: the voucher's and the assignment's ids (each unique), when it was
assigned and until when it may be redeemed.

Revision ID: 0031
Revises: 0028
Create Date: 2026-11-26 22:25:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0031"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("referral_rewards") as batch:
        batch.add_column(sa.Column("voucher_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("voucher_assignment_id", sa.String(length=36), nullable=True))
        batch.add_column(
            sa.Column(
                "voucher_assigned_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True
            )
        )
        batch.add_column(
            sa.Column(
                "voucher_valid_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True
            )
        )
    op.create_index("ux_referral_rewards_voucher", "referral_rewards", ["voucher_id"], unique=True)
    op.create_index(
        "ux_referral_rewards_assignment",
        "referral_rewards",
        ["voucher_assignment_id"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("ux_referral_rewards_assignment", table_name="referral_rewards")
    op.drop_index("ux_referral_rewards_voucher", table_name="referral_rewards")
    with op.batch_alter_table("referral_rewards") as batch:
        batch.drop_column("voucher_valid_until")
        batch.drop_column("voucher_assigned_at")
        batch.drop_column("voucher_assignment_id")
        batch.drop_column("voucher_id")
