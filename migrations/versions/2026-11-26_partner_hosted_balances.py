"""partner-hosted balances

`PartnerHosted` of a company's configuration (the partner's key sealed), the outbox of what
finplat tells the partner (reversals, clearings, refunds, adjustments), and who decided a
partner-hosted purchase.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0025"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "partner_hosted_configs",
        sa.Column("id", BIGINT, autoincrement=True, nullable=False),
        sa.Column("base_url", sa.String(length=2048), nullable=False),
        sa.Column("api_key", sa.String(length=1024), nullable=False),
        sa.Column("api_key_last4", sa.String(length=4), nullable=False),
        sa.Column("timeout_ms", sa.Integer(), nullable=False),
        sa.Column("fallback_decision", sa.String(length=8), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("company_id", BIGINT, nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_partner_hosted_configs_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_hosted_configs")),
        sa.UniqueConstraint("company_id", name=op.f("uq_partner_hosted_configs_company_id")),
    )
    op.create_index(
        op.f("ix_partner_hosted_configs_company_id"), "partner_hosted_configs", ["company_id"]
    )
    op.create_table(
        "partner_deliveries",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("source", sa.String(length=120), nullable=False),
        sa.Column("operation", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("lock_token", sa.String(length=32), nullable=True),
        sa.Column("locked_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.Column("delivered_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("company_id", BIGINT, nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_partner_deliveries_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_deliveries")),
        sa.UniqueConstraint(
            "company_id", "source", name=op.f("uq_partner_deliveries_company_id_source")
        ),
    )
    op.create_index(op.f("ix_partner_deliveries_company_id"), "partner_deliveries", ["company_id"])
    op.create_index(
        "ix_partner_deliveries_due", "partner_deliveries", ["status", "next_attempt_at"]
    )
    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("partner_decision", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.drop_column("partner_decision")
    op.drop_index("ix_partner_deliveries_due", table_name="partner_deliveries")
    op.drop_index(op.f("ix_partner_deliveries_company_id"), table_name="partner_deliveries")
    op.drop_table("partner_deliveries")
    op.drop_index(op.f("ix_partner_hosted_configs_company_id"), table_name="partner_hosted_configs")
    op.drop_table("partner_hosted_configs")
