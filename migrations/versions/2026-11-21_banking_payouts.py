"""banking_payouts

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_bankprov_payment_batches",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("batch_id", sa.String(length=64), nullable=False),
        sa.Column("budget_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("order_id", sa.String(length=64), nullable=True),
        sa.Column("order_status", sa.String(length=16), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_payment_batches")),
        sa.UniqueConstraint("batch_id", name=op.f("uq_sandbox_bankprov_payment_batches_batch_id")),
    )
    with op.batch_alter_table("sandbox_bankprov_payment_batches", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_payment_batches_company_id"),
            ["company_id"],
            unique=False,
        )

    op.create_table(
        "sandbox_bankprov_payments",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("batch_id", sa.String(length=64), nullable=False),
        sa.Column("budget_id", sa.String(length=64), nullable=False),
        sa.Column("payee_id", sa.String(length=64), nullable=False),
        sa.Column("payment_method", sa.String(length=32), nullable=False),
        sa.Column("beneficiary_name", sa.String(length=200), nullable=False),
        sa.Column("beneficiary_account_last4", sa.String(length=4), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("debit_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("debit_currency", sa.String(length=8), nullable=False),
        sa.Column("fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.Column("reference", sa.String(length=140), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.Column("confirmation_reference", sa.String(length=64), nullable=True),
        sa.Column("executed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_payments")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_payments_idempotency_key")
        ),
    )
    with op.batch_alter_table("sandbox_bankprov_payments", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_payments_batch_id"), ["batch_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_payments_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "banking_payout_approvals",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("budget_id", sa.String(length=32), nullable=False),
        sa.Column("payee_id", sa.String(length=32), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("debit_currency", sa.String(length=8), nullable=False),
        sa.Column("reference", sa.String(length=140), nullable=True),
        sa.Column("debit_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("failed_attempts", sa.Integer(), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("verified_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("used_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("transaction_id", sa.BigInteger(), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_banking_payout_approvals_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_banking_payout_approvals_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_banking_payout_approvals")),
    )
    with op.batch_alter_table("banking_payout_approvals", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_banking_payout_approvals_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_banking_payout_approvals_company_user", ["company_id", "user_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_banking_payout_approvals_user_id"), ["user_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("banking_payout_approvals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_banking_payout_approvals_user_id"))
        batch_op.drop_index("ix_banking_payout_approvals_company_user")
        batch_op.drop_index(batch_op.f("ix_banking_payout_approvals_company_id"))

    op.drop_table("banking_payout_approvals")
    with op.batch_alter_table("sandbox_bankprov_payments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_payments_company_id"))
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_payments_batch_id"))

    op.drop_table("sandbox_bankprov_payments")
    with op.batch_alter_table("sandbox_bankprov_payment_batches", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_payment_batches_company_id"))

    op.drop_table("sandbox_bankprov_payment_batches")
