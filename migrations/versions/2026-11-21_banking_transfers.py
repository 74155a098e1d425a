"""banking_transfers

Revision ID: 00010
Revises: 0009
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "00010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_bankprov_transfers",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("transfer_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("from_budget_id", sa.String(length=64), nullable=False),
        sa.Column("to_budget_id", sa.String(length=64), nullable=False),
        sa.Column("to_master", sa.Boolean(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_transfers")),
        sa.UniqueConstraint(
            "company_id",
            "idempotency_key",
            name=op.f("uq_sandbox_bankprov_transfers_company_id_idempotency_key"),
        ),
        sa.UniqueConstraint("transfer_id", name=op.f("uq_sandbox_bankprov_transfers_transfer_id")),
    )


def downgrade() -> None:
    op.drop_table("sandbox_bankprov_transfers")
