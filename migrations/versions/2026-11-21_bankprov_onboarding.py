"""bankprov onboarding

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "sandbox_bankprov_accounts",
        sa.Column("id", big_id, autoincrement=True, nullable=False),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("correlation_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("documents_required", sa.Boolean(), nullable=False),
        sa.Column("application", sa.Text(), nullable=False),
        sa.Column("proof_of_address_sha256", sa.String(length=64), nullable=True),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_accounts")),
        sa.UniqueConstraint("account_id", name=op.f("uq_sandbox_bankprov_accounts_account_id")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_accounts_idempotency_key")
        ),
    )
    op.create_table(
        "sandbox_bankprov_documents",
        sa.Column("id", big_id, autoincrement=True, nullable=False),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("document_id", sa.String(length=64), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("page_count", sa.Integer(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_documents")),
        sa.UniqueConstraint("document_id", name=op.f("uq_sandbox_bankprov_documents_document_id")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_bankprov_documents_idempotency_key")
        ),
    )
    op.create_index(
        op.f("ix_sandbox_bankprov_documents_account_id"),
        "sandbox_bankprov_documents",
        ["account_id"],
    )
    op.create_table(
        "sandbox_bankprov_information_requests",
        sa.Column("id", big_id, autoincrement=True, nullable=False),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("question", sa.String(length=500), nullable=False),
        sa.Column("person_id", sa.String(length=64), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answered_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_bankprov_information_requests")),
        sa.UniqueConstraint(
            "request_id", name=op.f("uq_sandbox_bankprov_information_requests_request_id")
        ),
    )
    op.create_index(
        op.f("ix_sandbox_bankprov_information_requests_account_id"),
        "sandbox_bankprov_information_requests",
        ["account_id"],
    )
    op.create_table(
        "bankprov_applications",
        sa.Column("id", big_id, autoincrement=True, nullable=False),
        sa.Column("user_id", big_id, nullable=False),
        sa.Column("correlation_id", sa.String(length=64), nullable=False),
        sa.Column("provider_account_id", sa.String(length=64), nullable=False),
        sa.Column("requested_features", sa.JSON(), nullable=False),
        sa.Column("main_purpose", sa.String(length=200), nullable=False),
        sa.Column("source_of_funds", sa.String(length=200), nullable=False),
        sa.Column("destination_of_funds", sa.String(length=2), nullable=False),
        sa.Column("currencies_required", sa.String(length=100), nullable=False),
        sa.Column("annual_volume", sa.String(length=32), nullable=False),
        sa.Column("number_of_payments", sa.String(length=32), nullable=False),
        sa.Column("card_purposes", sa.String(length=200), nullable=True),
        sa.Column("atm_withdrawals_required", sa.Boolean(), nullable=True),
        sa.Column("number_of_cards_required", sa.Integer(), nullable=True),
        sa.Column("card_annual_spend", sa.String(length=32), nullable=True),
        sa.Column("proof_of_address_type", sa.String(length=8), nullable=False),
        sa.Column("proof_of_address_size", sa.Integer(), nullable=False),
        sa.Column("proof_of_address_sha256", sa.String(length=64), nullable=False),
        sa.Column("proof_of_address_date", sa.Date(), nullable=False),
        sa.Column("company_id", big_id, nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_bankprov_applications_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_bankprov_applications_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bankprov_applications")),
        sa.UniqueConstraint(
            "company_id", "user_id", name=op.f("uq_bankprov_applications_company_id_user_id")
        ),
    )
    op.create_index(
        op.f("ix_bankprov_applications_company_id"), "bankprov_applications", ["company_id"]
    )
    op.create_table(
        "bankprov_documents",
        sa.Column("id", big_id, autoincrement=True, nullable=False),
        sa.Column("application_id", big_id, nullable=False),
        sa.Column("provider_document_id", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("page_count", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("company_id", big_id, nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["bankprov_applications.id"],
            name=op.f("fk_bankprov_documents_application_id_bankprov_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_bankprov_documents_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bankprov_documents")),
        sa.UniqueConstraint(
            "company_id",
            "application_id",
            "fingerprint",
            name=op.f("uq_bankprov_documents_company_id_application_id_fingerprint"),
        ),
    )
    op.create_index(
        op.f("ix_bankprov_documents_application_id"), "bankprov_documents", ["application_id"]
    )
    op.create_index(op.f("ix_bankprov_documents_company_id"), "bankprov_documents", ["company_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_bankprov_documents_company_id"), table_name="bankprov_documents")
    op.drop_index(op.f("ix_bankprov_documents_application_id"), table_name="bankprov_documents")
    op.drop_table("bankprov_documents")
    op.drop_index(op.f("ix_bankprov_applications_company_id"), table_name="bankprov_applications")
    op.drop_table("bankprov_applications")
    op.drop_index(
        op.f("ix_sandbox_bankprov_information_requests_account_id"),
        table_name="sandbox_bankprov_information_requests",
    )
    op.drop_table("sandbox_bankprov_information_requests")
    op.drop_index(
        op.f("ix_sandbox_bankprov_documents_account_id"), table_name="sandbox_bankprov_documents"
    )
    op.drop_table("sandbox_bankprov_documents")
    op.drop_table("sandbox_bankprov_accounts")
