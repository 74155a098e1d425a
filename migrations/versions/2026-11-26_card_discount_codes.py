"""card discount codes

Discount codes a company defines (a percentage off the top-up fee, an optional validity
window) and the one code each card may carry.

Revision ID: 0024
Revises: 0020
Create Date: 2026-11-26 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0024"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "card_discount_codes",
        sa.Column("id", BIGINT, autoincrement=True, nullable=False),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("percent_off", sa.String(length=16), nullable=False),
        sa.Column("valid_from", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("valid_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("company_id", BIGINT, nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_discount_codes_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_discount_codes")),
        sa.UniqueConstraint(
            "company_id", "code", name=op.f("uq_card_discount_codes_company_id_code")
        ),
    )
    op.create_index(
        op.f("ix_card_discount_codes_company_id"), "card_discount_codes", ["company_id"]
    )
    op.create_table(
        "card_discounts",
        sa.Column("card_id", BIGINT, nullable=False),
        sa.Column("discount_code_id", BIGINT, nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("company_id", BIGINT, nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_card_discounts_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_discounts_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["discount_code_id"],
            ["card_discount_codes.id"],
            name=op.f("fk_card_discounts_discount_code_id_card_discount_codes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("card_id", name=op.f("pk_card_discounts")),
    )
    op.create_index(op.f("ix_card_discounts_company_id"), "card_discounts", ["company_id"])
    op.create_index(
        op.f("ix_card_discounts_discount_code_id"), "card_discounts", ["discount_code_id"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_card_discounts_discount_code_id"), table_name="card_discounts")
    op.drop_index(op.f("ix_card_discounts_company_id"), table_name="card_discounts")
    op.drop_table("card_discounts")
    op.drop_index(op.f("ix_card_discount_codes_company_id"), table_name="card_discount_codes")
    op.drop_table("card_discount_codes")
