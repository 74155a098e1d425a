"""banking_payees

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _utc(name: str, *, nullable: bool) -> sa.Column[object]:
    return sa.Column(name, finplat.db.types.UtcDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "sandbox_bankprov_payees",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("payee_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("payment_type", sa.String(length=16), nullable=False),
        sa.Column("payment_method", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("iban", sa.String(length=34), nullable=True),
        sa.Column("account_number", sa.String(length=34), nullable=True),
        sa.Column("sort_code", sa.String(length=6), nullable=True),
        sa.Column("account_number_last4", sa.String(length=4), nullable=False),
        sa.Column("bic", sa.String(length=11), nullable=True),
        sa.Column("bank_name", sa.String(length=100), nullable=True),
        sa.Column("bank_country", sa.String(length=2), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        _utc("created_at", nullable=False),
        _utc("removed_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_payees")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_payees_idempotency_key")
        ),
        sa.UniqueConstraint("payee_id", name=op.f("uq_sandbox_bankprov_payees_payee_id")),
    )
    with op.batch_alter_table("sandbox_bankprov_payees", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_payees_account_id"), ["account_id"], unique=False
        )

    op.create_table(
        "banking_payees",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", BIG_ID, nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("payment_type", sa.String(length=16), nullable=False),
        sa.Column("payment_method", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("account_number_last4", sa.String(length=4), nullable=False),
        sa.Column("bic", sa.String(length=11), nullable=True),
        sa.Column("bank_name", sa.String(length=100), nullable=True),
        sa.Column("bank_country", sa.String(length=2), nullable=True),
        sa.Column("comments", sa.String(length=500), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        _utc("token_expires_at", nullable=False),
        sa.Column("verification_attempts", sa.Integer(), nullable=False),
        _utc("token_accepted_at", nullable=True),
        sa.Column("pending_details", sa.JSON(), nullable=True),
        sa.Column("provider_payee_id", sa.String(length=64), nullable=True),
        _utc("verified_at", nullable=True),
        _utc("deleted_at", nullable=True),
        sa.Column("company_id", BIG_ID, nullable=False),
        _utc("created_at", nullable=False),
        _utc("updated_at", nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_banking_payees_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_banking_payees_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_banking_payees")),
    )
    with op.batch_alter_table("banking_payees", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_banking_payees_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_banking_payees_company_user",
            ["company_id", "user_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(batch_op.f("ix_banking_payees_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("banking_payees", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_banking_payees_user_id"))
        batch_op.drop_index("ix_banking_payees_company_user")
        batch_op.drop_index(batch_op.f("ix_banking_payees_company_id"))
    op.drop_table("banking_payees")
    with op.batch_alter_table("sandbox_bankprov_payees", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_payees_account_id"))
    op.drop_table("sandbox_bankprov_payees")
