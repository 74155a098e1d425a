"""banking_fx

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_bankprov_fx_quotes",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("quote_id", sa.String(length=64), nullable=False),
        sa.Column("budget_id", sa.String(length=64), nullable=False),
        sa.Column("sell_currency", sa.String(length=8), nullable=False),
        sa.Column("buy_currency", sa.String(length=8), nullable=False),
        sa.Column("sell_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("buy_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.Column("fixed_side", sa.String(length=8), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_fx_quotes")),
        sa.UniqueConstraint("quote_id", name=op.f("uq_sandbox_bankprov_fx_quotes_quote_id")),
    )
    op.create_table(
        "sandbox_bankprov_fx_trades",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("trade_id", sa.String(length=64), nullable=False),
        sa.Column("quote_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("executed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_fx_trades")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_fx_trades_idempotency_key")
        ),
        sa.UniqueConstraint("quote_id", name=op.f("uq_sandbox_bankprov_fx_trades_quote_id")),
        sa.UniqueConstraint("trade_id", name=op.f("uq_sandbox_bankprov_fx_trades_trade_id")),
    )
    op.create_table(
        "banking_fx_quotes",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("budget_id", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("provider_quote_id", sa.String(length=64), nullable=False),
        sa.Column("sell_currency", sa.String(length=8), nullable=False),
        sa.Column("buy_currency", sa.String(length=8), nullable=False),
        sa.Column("sell_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("buy_amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.Column("fixed_side", sa.String(length=8), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("executed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("transaction_id", sa.BigInteger(), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["budget_id"],
            ["banking_budgets.id"],
            name=op.f("fk_banking_fx_quotes_budget_id_banking_budgets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_banking_fx_quotes_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_banking_fx_quotes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_banking_fx_quotes")),
    )
    with op.batch_alter_table("banking_fx_quotes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_banking_fx_quotes_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_banking_fx_quotes_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("banking_fx_quotes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_banking_fx_quotes_user_id"))
        batch_op.drop_index(batch_op.f("ix_banking_fx_quotes_company_id"))
    op.drop_table("banking_fx_quotes")
    op.drop_table("sandbox_bankprov_fx_trades")
    op.drop_table("sandbox_bankprov_fx_quotes")
