"""money core

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 17:16:48.293451
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "sandbox_funding_confirmations",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("idempotency_key", sa.String(length=64), nullable=False),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("reference", sa.String(length=40), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_funding_confirmations")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_funding_confirmations_idempotency_key")
        ),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("type", sa.String(length=100), nullable=False),
        sa.Column("domain", sa.String(length=50), nullable=False),
        sa.Column("provider", sa.String(length=50), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_events_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_events_company_created", ["company_id", "created_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_events_company_id"), ["company_id"], unique=False)

    op.create_table(
        "idempotency_keys",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("scope", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("request_method", sa.String(length=8), nullable=False),
        sa.Column("request_path", sa.String(length=512), nullable=False),
        sa.Column("recovery_point", sa.String(length=32), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("lock_token", sa.String(length=32), nullable=True),
        sa.Column("locked_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.LargeBinary(), nullable=True),
        sa.Column("response_content_type", sa.String(length=100), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_idempotency_keys_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_keys")),
        sa.UniqueConstraint(
            "company_id", "scope", "key", name=op.f("uq_idempotency_keys_company_id_scope_key")
        ),
    )
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_idempotency_keys_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_idempotency_keys_completed_at"), ["completed_at"], unique=False
        )

    op.create_table(
        "ledger_accounts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("owner_type", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("allow_negative", sa.Boolean(), nullable=False),
        sa.Column("shard_count", sa.Integer(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.CheckConstraint(
            "shard_count >= 1", name=op.f("ck_ledger_accounts_shard_count_positive")
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_ledger_accounts_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_accounts")),
        sa.UniqueConstraint(
            "company_id",
            "code",
            "owner_type",
            "owner_id",
            "currency",
            name=op.f("uq_ledger_accounts_company_id_code_owner_type_owner_id_currency"),
        ),
    )
    with op.batch_alter_table("ledger_accounts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ledger_accounts_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "ledger_transfers",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column(
            "pending_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("reference", sa.String(length=255), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_ledger_transfers_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["pending_id"],
            ["ledger_transfers.id"],
            name=op.f("fk_ledger_transfers_pending_id_ledger_transfers"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_transfers")),
        sa.UniqueConstraint("pending_id", name=op.f("uq_ledger_transfers_pending_id")),
    )
    with op.batch_alter_table("ledger_transfers", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ledger_transfers_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "ledger_balances",
        sa.Column(
            "account_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("posted", sa.BigInteger(), nullable=False),
        sa.Column("pending_debits", sa.BigInteger(), nullable=False),
        sa.Column("pending_credits", sa.BigInteger(), nullable=False),
        sa.Column("floor", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "floor IS NULL OR posted - pending_debits >= floor",
            name=op.f("ck_ledger_balances_available_above_floor"),
        ),
        sa.CheckConstraint(
            "pending_debits >= 0 AND pending_credits >= 0",
            name=op.f("ck_ledger_balances_pending_positive"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_ledger_balances_account_id_ledger_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("account_id", "shard", name=op.f("pk_ledger_balances")),
    )
    op.create_table(
        "ledger_entries",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "transfer_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "account_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("layer", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_ledger_entries_account_id_ledger_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["ledger_transfers.id"],
            name=op.f("fk_ledger_entries_transfer_id_ledger_transfers"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_ledger_entries_account_shard", ["account_id", "shard"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_ledger_entries_transfer_id"), ["transfer_id"], unique=False
        )

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("lock_token", sa.String(length=32), nullable=True),
        sa.Column("locked_until", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.Column("last_attempt_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_webhook_deliveries_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"], ["events.id"], name=op.f("fk_webhook_deliveries_event_id_events")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_deliveries_company_created", ["company_id", "created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_webhook_deliveries_due", ["status", "next_attempt_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_event_id"), ["event_id"], unique=False
        )

    op.create_table(
        "webhook_attempts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("delivery_id", sa.String(length=40), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=300), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("attempted_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"], unique=False
        )

    with op.batch_alter_table("companies", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "webhook_disabled_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True
            )
        )


def downgrade() -> None:

    with op.batch_alter_table("companies", schema=None) as batch_op:
        batch_op.drop_column("webhook_disabled_at")

    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))

    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_event_id"))
        batch_op.drop_index("ix_webhook_deliveries_due")
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_company_id"))
        batch_op.drop_index("ix_webhook_deliveries_company_created")

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ledger_entries_transfer_id"))
        batch_op.drop_index("ix_ledger_entries_account_shard")

    op.drop_table("ledger_entries")
    op.drop_table("ledger_balances")
    with op.batch_alter_table("ledger_transfers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ledger_transfers_company_id"))

    op.drop_table("ledger_transfers")
    with op.batch_alter_table("ledger_accounts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ledger_accounts_company_id"))

    op.drop_table("ledger_accounts")
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_keys_completed_at"))
        batch_op.drop_index(batch_op.f("ix_idempotency_keys_company_id"))

    op.drop_table("idempotency_keys")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_events_company_id"))
        batch_op.drop_index("ix_events_company_created")

    op.drop_table("events")
    op.drop_table("sandbox_funding_confirmations")
