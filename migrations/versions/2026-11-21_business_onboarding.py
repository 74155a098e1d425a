"""business onboarding

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The banking provider's sandbox KYB state, then the platform's business onboarding.
    op.create_table(
        "sandbox_bankprov_business_applications",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("application_id", sa.String(length=40), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("market", sa.String(length=2), nullable=False),
        sa.Column("registered_name", sa.String(length=200), nullable=False),
        sa.Column("registration_number", sa.String(length=64), nullable=False),
        sa.Column("compliance", sa.Text(), nullable=True),
        sa.Column("account_id", sa.String(length=40), nullable=True),
        sa.Column("last_submission_key", sa.String(length=128), nullable=True),
        sa.Column("submissions", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_business_applications")),
        sa.UniqueConstraint(
            "application_id", name=op.f("uq_sandbox_bankprov_business_applications_application_id")
        ),
        sa.UniqueConstraint(
            "company_id",
            "idempotency_key",
            name=op.f("uq_sandbox_bankprov_business_applications_company_id_idempotency_key"),
        ),
    )
    op.create_table(
        "sandbox_bankprov_business_documents",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("application_id", sa.String(length=40), nullable=False),
        sa.Column("person_id", sa.String(length=40), nullable=True),
        sa.Column("document_id", sa.String(length=40), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("document_type", sa.String(length=64), nullable=False),
        sa.Column("content_type", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_business_documents")),
        sa.UniqueConstraint(
            "company_id",
            "idempotency_key",
            name=op.f("uq_sandbox_bankprov_business_documents_company_id_idempotency_key"),
        ),
        sa.UniqueConstraint(
            "document_id", name=op.f("uq_sandbox_bankprov_business_documents_document_id")
        ),
    )
    with op.batch_alter_table("sandbox_bankprov_business_documents", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_business_documents_application_id"),
            ["application_id"],
            unique=False,
        )

    op.create_table(
        "sandbox_bankprov_business_people",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("application_id", sa.String(length=40), nullable=False),
        sa.Column("person_id", sa.String(length=40), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_business_people")),
        sa.UniqueConstraint(
            "company_id",
            "idempotency_key",
            name=op.f("uq_sandbox_bankprov_business_people_company_id_idempotency_key"),
        ),
        sa.UniqueConstraint(
            "person_id", name=op.f("uq_sandbox_bankprov_business_people_person_id")
        ),
    )
    with op.batch_alter_table("sandbox_bankprov_business_people", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_bankprov_business_people_application_id"),
            ["application_id"],
            unique=False,
        )

    op.create_table(
        "business_applications",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("provider_application_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("market", sa.String(length=2), nullable=False),
        sa.Column("business_type", sa.String(length=64), nullable=False),
        sa.Column("country_of_incorporation", sa.String(length=2), nullable=True),
        sa.Column("registered_name", sa.String(length=200), nullable=False),
        sa.Column("registration_number", sa.String(length=64), nullable=False),
        sa.Column("business_overview", sa.String(length=2000), nullable=True),
        sa.Column("industry_main", sa.String(length=100), nullable=True),
        sa.Column("industry_sub", sa.String(length=100), nullable=True),
        sa.Column("employee_count", sa.Integer(), nullable=True),
        sa.Column("incorporation_date", sa.Date(), nullable=True),
        sa.Column("website", sa.String(length=2048), nullable=True),
        sa.Column("compliance_requirements", sa.Text(), nullable=True),
        sa.Column("account_id", sa.String(length=40), nullable=True),
        sa.Column("submissions", sa.Integer(), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_business_applications_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_business_applications_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_business_applications")),
        sa.UniqueConstraint(
            "company_id", "user_id", name=op.f("uq_business_applications_company_id_user_id")
        ),
    )
    with op.batch_alter_table("business_applications", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_business_applications_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_business_applications_provider_application_id"),
            ["provider_application_id"],
            unique=False,
        )

    op.create_table(
        "business_associated_people",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "application_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("provider_person_id", sa.String(length=40), nullable=False),
        sa.Column("first_name", sa.String(length=100), nullable=False),
        sa.Column("last_name", sa.String(length=100), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("ownership_hundredths", sa.Integer(), nullable=True),
        sa.Column("date_of_birth", sa.Date(), nullable=False),
        sa.Column("nationality", sa.String(length=2), nullable=False),
        sa.Column("announced_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["business_applications.id"],
            name=op.f("fk_business_associated_people_application_id_business_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_business_associated_people_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_business_associated_people")),
        sa.UniqueConstraint(
            "application_id",
            "email",
            name=op.f("uq_business_associated_people_application_id_email"),
        ),
    )
    with op.batch_alter_table("business_associated_people", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_business_associated_people_application_id"),
            ["application_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_business_associated_people_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_business_associated_people_provider_person_id"),
            ["provider_person_id"],
            unique=False,
        )

    op.create_table(
        "business_documents",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "application_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("person_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("provider_document_id", sa.String(length=40), nullable=False),
        sa.Column("document_type", sa.String(length=64), nullable=False),
        sa.Column("content_type", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("upload_key", sa.String(length=64), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["business_applications.id"],
            name=op.f("fk_business_documents_application_id_business_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_business_documents_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["business_associated_people.id"],
            name=op.f("fk_business_documents_person_id_business_associated_people"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_business_documents")),
        sa.UniqueConstraint(
            "company_id", "upload_key", name=op.f("uq_business_documents_company_id_upload_key")
        ),
    )
    with op.batch_alter_table("business_documents", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_business_documents_application_id"), ["application_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_business_documents_company_id"), ["company_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("business_documents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_business_documents_company_id"))
        batch_op.drop_index(batch_op.f("ix_business_documents_application_id"))
    op.drop_table("business_documents")
    with op.batch_alter_table("business_associated_people", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_business_associated_people_provider_person_id"))
        batch_op.drop_index(batch_op.f("ix_business_associated_people_company_id"))
        batch_op.drop_index(batch_op.f("ix_business_associated_people_application_id"))
    op.drop_table("business_associated_people")
    with op.batch_alter_table("business_applications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_business_applications_provider_application_id"))
        batch_op.drop_index(batch_op.f("ix_business_applications_company_id"))
    op.drop_table("business_applications")
    with op.batch_alter_table("sandbox_bankprov_business_people", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_business_people_application_id"))
    op.drop_table("sandbox_bankprov_business_people")
    with op.batch_alter_table("sandbox_bankprov_business_documents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_bankprov_business_documents_application_id"))
    op.drop_table("sandbox_bankprov_business_documents")
    op.drop_table("sandbox_bankprov_business_applications")
