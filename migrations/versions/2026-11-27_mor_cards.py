"""mor cards

Cards for a MOR merchant's people: each card's assignment history (at most one open
assignment per card) and the load requests a card's assignee makes to the merchant.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-27 01:42:20.779768
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mor_card_assignments",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("assigned_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("unassigned_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_mor_card_assignments_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_mor_card_assignments_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_mor_card_assignments_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mor_card_assignments")),
    )
    with op.batch_alter_table("mor_card_assignments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_mor_card_assignments_card", ["company_id", "card_id", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_mor_card_assignments_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_mor_card_assignments_user", ["company_id", "user_id", "unassigned_at"], unique=False
        )
        batch_op.create_index(
            "ux_mor_card_assignments_open",
            ["card_id"],
            unique=True,
            postgresql_where=sa.text("unassigned_at IS NULL"),
            sqlite_where=sa.text("unassigned_at IS NULL"),
        )

    op.create_table(
        "mor_load_requests",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("note", sa.String(length=500), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("decline_reason", sa.String(length=500), nullable=True),
        sa.Column("failure_code", sa.String(length=64), nullable=True),
        sa.Column(
            "funding_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("decided_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_mor_load_requests_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_mor_load_requests_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_mor_load_requests_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mor_load_requests")),
    )
    with op.batch_alter_table("mor_load_requests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_mor_load_requests_company", ["company_id", "status", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_mor_load_requests_company_id"), ["company_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("mor_load_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mor_load_requests_company_id"))
        batch_op.drop_index("ix_mor_load_requests_company")

    op.drop_table("mor_load_requests")
    with op.batch_alter_table("mor_card_assignments", schema=None) as batch_op:
        batch_op.drop_index("ux_mor_card_assignments_open")
        batch_op.drop_index("ix_mor_card_assignments_user")
        batch_op.drop_index(batch_op.f("ix_mor_card_assignments_company_id"))
        batch_op.drop_index("ix_mor_card_assignments_card")

    op.drop_table("mor_card_assignments")
