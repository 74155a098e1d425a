"""payments: payment requests, mandates and collections

Revision ID: 0022
Revises: 0023
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0022"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_bankprov_collections",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("collection_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("mandate_id", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_collections")),
        sa.UniqueConstraint(
            "collection_id", name=op.f("uq_sandbox_bankprov_collections_collection_id")
        ),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_collections_idempotency_key")
        ),
    )
    with op.batch_alter_table("sandbox_bankprov_collections", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_collections_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "sandbox_bankprov_mandates",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("mandate_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("budget_id", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("max_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("end_date", sa.Date(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_mandates")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_mandates_idempotency_key")
        ),
        sa.UniqueConstraint("mandate_id", name=op.f("uq_sandbox_bankprov_mandates_mandate_id")),
    )
    with op.batch_alter_table("sandbox_bankprov_mandates", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_mandates_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "sandbox_bankprov_payment_requests",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("budget_id", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("description", sa.String(length=140), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("payment_id", sa.String(length=64), nullable=True),
        sa.Column("paid_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_payment_requests")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_payment_requests_idempotency_key")
        ),
        sa.UniqueConstraint(
            "request_id", name=op.f("uq_sandbox_bankprov_payment_requests_request_id")
        ),
    )
    with op.batch_alter_table("sandbox_bankprov_payment_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_payment_requests_company_id"),
            ["company_id"],
            unique=False,
        )

    op.create_table(
        "payment_mandates",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("budget_id", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("max_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("frequency", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("description", sa.String(length=140), nullable=True),
        sa.Column("external_reference_id", sa.String(length=64), nullable=True),
        sa.Column("start_date", sa.Date(), nullable=False),
        sa.Column("end_date", sa.Date(), nullable=True),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("provider_mandate_id", sa.String(length=64), nullable=False),
        sa.Column("failure_reason", sa.String(length=64), nullable=True),
        sa.Column("allowance_period", sa.String(length=16), nullable=True),
        sa.Column("activated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("cancelled_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_payment_mandates_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_payment_mandates_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_mandates")),
        sa.UniqueConstraint(
            "provider_mandate_id", name=op.f("uq_payment_mandates_provider_mandate_id")
        ),
    )
    with op.batch_alter_table("payment_mandates", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_payment_mandates_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_payment_mandates_company_user", ["company_id", "user_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_payment_mandates_user_id"), ["user_id"], unique=False)

    op.create_table(
        "payment_requests",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("budget_id", sa.String(length=32), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("description", sa.String(length=140), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("provider_request_id", sa.String(length=64), nullable=False),
        sa.Column("provider_payment_id", sa.String(length=64), nullable=True),
        sa.Column("payer_name", sa.String(length=140), nullable=True),
        sa.Column("transaction_id", sa.BigInteger(), nullable=True),
        sa.Column("paid_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("cancelled_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("expired_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_payment_requests_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_payment_requests_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_requests")),
        sa.UniqueConstraint(
            "provider_request_id", name=op.f("uq_payment_requests_provider_request_id")
        ),
    )
    with op.batch_alter_table("payment_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_payment_requests_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_payment_requests_company_user",
            ["company_id", "user_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(
            "ix_payment_requests_status_expiry", ["status", "expires_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_payment_requests_user_id"), ["user_id"], unique=False)

    op.create_table(
        "payment_collections",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("mandate_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("merchant_reference_id", sa.String(length=64), nullable=False),
        sa.Column("period", sa.String(length=16), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_payment_collections_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["mandate_id"],
            ["payment_mandates.id"],
            name=op.f("fk_payment_collections_mandate_id_payment_mandates"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_payment_collections_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_collections")),
        sa.UniqueConstraint(
            "company_id",
            "merchant_reference_id",
            name=op.f("uq_payment_collections_company_id_merchant_reference_id"),
        ),
        sa.UniqueConstraint("transaction_id", name=op.f("uq_payment_collections_transaction_id")),
    )
    with op.batch_alter_table("payment_collections", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_payment_collections_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_payment_collections_mandate_id"), ["mandate_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("payment_collections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_payment_collections_mandate_id"))
        batch_op.drop_index(batch_op.f("ix_payment_collections_company_id"))

    op.drop_table("payment_collections")
    with op.batch_alter_table("payment_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_payment_requests_user_id"))
        batch_op.drop_index("ix_payment_requests_status_expiry")
        batch_op.drop_index("ix_payment_requests_company_user")
        batch_op.drop_index(batch_op.f("ix_payment_requests_company_id"))

    op.drop_table("payment_requests")
    with op.batch_alter_table("payment_mandates", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_payment_mandates_user_id"))
        batch_op.drop_index("ix_payment_mandates_company_user")
        batch_op.drop_index(batch_op.f("ix_payment_mandates_company_id"))

    op.drop_table("payment_mandates")
    with op.batch_alter_table("sandbox_bankprov_payment_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_payment_requests_company_id"))

    op.drop_table("sandbox_bankprov_payment_requests")
    with op.batch_alter_table("sandbox_bankprov_mandates", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_mandates_company_id"))

    op.drop_table("sandbox_bankprov_mandates")
    with op.batch_alter_table("sandbox_bankprov_collections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_collections_company_id"))

    op.drop_table("sandbox_bankprov_collections")
