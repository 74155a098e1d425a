"""mor identity and kyb

A MOR merchant's own KYB (one per company: the provider's application, status, submissions,
what was last sent) and its simple users' credentials (the email compared lower-cased, unique
per company, and the argon2id hash) and bearer tokens (their SHA-256, expiry, revocation).

Revision ID: 0033
Revises: 0035
Create Date: 2026-11-27 01:40:15.380875
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0033"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mor_kyb",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("provider_application_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("submissions", sa.Integer(), nullable=False),
        sa.Column("submitted", sa.Text(), nullable=False),
        sa.Column("submitted_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_mor_kyb_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mor_kyb")),
        sa.UniqueConstraint("company_id", name=op.f("uq_mor_kyb_company_id")),
    )
    with op.batch_alter_table("mor_kyb", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mor_kyb_company_id"), ["company_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_mor_kyb_provider_application_id"),
            ["provider_application_id"],
            unique=False,
        )

    op.create_table(
        "mor_access_tokens",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_mor_access_tokens_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_mor_access_tokens_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mor_access_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_mor_access_tokens_token_hash")),
    )
    with op.batch_alter_table("mor_access_tokens", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mor_access_tokens_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_mor_access_tokens_user_id"), ["user_id"], unique=False)

    op.create_table(
        "mor_credentials",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("email_key", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_mor_credentials_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_mor_credentials_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mor_credentials")),
        sa.UniqueConstraint(
            "company_id", "email_key", name=op.f("uq_mor_credentials_company_id_email_key")
        ),
        sa.UniqueConstraint("user_id", name=op.f("uq_mor_credentials_user_id")),
    )
    with op.batch_alter_table("mor_credentials", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mor_credentials_company_id"), ["company_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("mor_credentials", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mor_credentials_company_id"))

    op.drop_table("mor_credentials")
    with op.batch_alter_table("mor_access_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mor_access_tokens_user_id"))
        batch_op.drop_index(batch_op.f("ix_mor_access_tokens_company_id"))

    op.drop_table("mor_access_tokens")
    with op.batch_alter_table("mor_kyb", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mor_kyb_provider_application_id"))
        batch_op.drop_index(batch_op.f("ix_mor_kyb_company_id"))

    op.drop_table("mor_kyb")
