"""loyalty: programmes, merchants and MIDs, points awards, imports; card transactions' MID

Revision ID: 0029
Revises: 0024
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "loyalty_programs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("points_rule", sa.String(length=24), nullable=False),
        sa.Column("points_rate", sa.Integer(), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_loyalty_programs_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loyalty_programs")),
    )
    with op.batch_alter_table("loyalty_programs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_loyalty_programs_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "loyalty_import_configs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "program_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("delimiter", sa.String(length=1), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_loyalty_import_configs_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["program_id"],
            ["loyalty_programs.id"],
            name=op.f("fk_loyalty_import_configs_program_id_loyalty_programs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loyalty_import_configs")),
    )
    with op.batch_alter_table("loyalty_import_configs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_loyalty_import_configs_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_loyalty_import_configs_program_id"), ["program_id"], unique=False
        )

    op.create_table(
        "loyalty_merchants",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "program_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("city", sa.String(length=100), nullable=True),
        sa.Column("country", sa.String(length=2), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_loyalty_merchants_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["program_id"],
            ["loyalty_programs.id"],
            name=op.f("fk_loyalty_merchants_program_id_loyalty_programs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loyalty_merchants")),
    )
    with op.batch_alter_table("loyalty_merchants", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_loyalty_merchants_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_loyalty_merchants_program_id"), ["program_id"], unique=False
        )

    op.create_table(
        "loyalty_mids",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "merchant_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("mid", sa.String(length=32), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_loyalty_mids_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["loyalty_merchants.id"],
            name=op.f("fk_loyalty_mids_merchant_id_loyalty_merchants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loyalty_mids")),
        sa.UniqueConstraint("company_id", "mid", name=op.f("uq_loyalty_mids_company_id_mid")),
    )
    with op.batch_alter_table("loyalty_mids", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_loyalty_mids_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_loyalty_mids_merchant_id"), ["merchant_id"], unique=False
        )

    op.create_table(
        "loyalty_awards",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "program_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "merchant_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column(
            "card_transaction_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column(
            "import_config_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("external_id", sa.String(length=64), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=True),
        sa.Column("mid", sa.String(length=32), nullable=True),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("paid_minor", sa.BigInteger(), nullable=False),
        sa.Column("points_rule", sa.String(length=24), nullable=False),
        sa.Column("points_rate", sa.Integer(), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("occurred_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_transaction_id"],
            ["card_transactions.id"],
            name=op.f("fk_loyalty_awards_card_transaction_id_card_transactions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_loyalty_awards_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["import_config_id"],
            ["loyalty_import_configs.id"],
            name=op.f("fk_loyalty_awards_import_config_id_loyalty_import_configs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["loyalty_merchants.id"],
            name=op.f("fk_loyalty_awards_merchant_id_loyalty_merchants"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["program_id"],
            ["loyalty_programs.id"],
            name=op.f("fk_loyalty_awards_program_id_loyalty_programs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loyalty_awards")),
        sa.UniqueConstraint(
            "company_id",
            "card_transaction_id",
            name=op.f("uq_loyalty_awards_company_id_card_transaction_id"),
        ),
        sa.UniqueConstraint(
            "company_id",
            "import_config_id",
            "external_id",
            name=op.f("uq_loyalty_awards_company_id_import_config_id_external_id"),
        ),
    )
    with op.batch_alter_table("loyalty_awards", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_loyalty_awards_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_loyalty_awards_company_occurred", ["company_id", "occurred_at"], unique=False
        )
        batch_op.create_index(
            "ix_loyalty_awards_company_user", ["company_id", "user_id", "program_id"], unique=False
        )

    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mid", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.drop_column("mid")

    with op.batch_alter_table("loyalty_awards", schema=None) as batch_op:
        batch_op.drop_index("ix_loyalty_awards_company_user")
        batch_op.drop_index("ix_loyalty_awards_company_occurred")
        batch_op.drop_index(batch_op.f("ix_loyalty_awards_company_id"))

    op.drop_table("loyalty_awards")
    with op.batch_alter_table("loyalty_mids", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_loyalty_mids_merchant_id"))
        batch_op.drop_index(batch_op.f("ix_loyalty_mids_company_id"))

    op.drop_table("loyalty_mids")
    with op.batch_alter_table("loyalty_merchants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_loyalty_merchants_program_id"))
        batch_op.drop_index(batch_op.f("ix_loyalty_merchants_company_id"))

    op.drop_table("loyalty_merchants")
    with op.batch_alter_table("loyalty_import_configs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_loyalty_import_configs_program_id"))
        batch_op.drop_index(batch_op.f("ix_loyalty_import_configs_company_id"))

    op.drop_table("loyalty_import_configs")
    with op.batch_alter_table("loyalty_programs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_loyalty_programs_company_id"))

    op.drop_table("loyalty_programs")
