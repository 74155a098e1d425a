"""MOR merchant money: a company's parent, the parent's fundings of its children, and an
index on the ledger's company fundings for the merchant's wallet statement

Revision ID: 0035
Revises: 0032
Create Date: 2026-11-27 01:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0035"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
FUNDING = sa.text("code = 'company.funding'")


def upgrade() -> None:
    with op.batch_alter_table("companies") as batch:
        batch.add_column(sa.Column("parent_company_id", BIG_ID, nullable=True))
        batch.create_foreign_key(
            "fk_companies_parent_company_id_companies",
            "companies",
            ["parent_company_id"],
            ["id"],
            ondelete="RESTRICT",
        )
        batch.create_index("ix_companies_parent_company_id", ["parent_company_id"])
    op.create_table(
        "mor_child_fundings",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("parent_company_id", BIG_ID, nullable=False),
        sa.Column("child_company_id", BIG_ID, nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("parent_transfer_id", sa.BigInteger(), nullable=False),
        sa.Column("child_transfer_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["parent_company_id"],
            ["companies.id"],
            name="fk_mor_child_fundings_parent_company_id_companies",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["child_company_id"],
            ["companies.id"],
            name="fk_mor_child_fundings_child_company_id_companies",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_mor_child_fundings"),
    )
    op.create_index(
        "ix_mor_child_fundings_parent",
        "mor_child_fundings",
        ["parent_company_id", "child_company_id", "id"],
    )
    op.create_index("ix_mor_child_fundings_child", "mor_child_fundings", ["child_company_id", "id"])
    op.create_index(
        "ix_ledger_transfers_company_funding",
        "ledger_transfers",
        ["company_id", "id"],
        postgresql_where=FUNDING,
        sqlite_where=FUNDING,
    )


def downgrade() -> None:
    op.drop_index("ix_ledger_transfers_company_funding", table_name="ledger_transfers")
    op.drop_index("ix_mor_child_fundings_child", table_name="mor_child_fundings")
    op.drop_index("ix_mor_child_fundings_parent", table_name="mor_child_fundings")
    op.drop_table("mor_child_fundings")
    with op.batch_alter_table("companies") as batch:
        batch.drop_index("ix_companies_parent_company_id")
        batch.drop_constraint("fk_companies_parent_company_id_companies", type_="foreignkey")
        batch.drop_column("parent_company_id")
