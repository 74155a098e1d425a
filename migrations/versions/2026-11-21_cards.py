"""cards

Revision ID: 0011
Revises: 00010
Create Date: 2026-11-21 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0011"
down_revision: str | None = "00010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _upgrade_cards()
    _upgrade_card_funding()


def downgrade() -> None:
    _downgrade_card_funding()
    _downgrade_cards()


# ---- card funding, fees and auto top-up (cards/models_funding.py) ----


def _upgrade_card_funding() -> None:
    op.create_table(
        "card_fee_schedules",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("tier_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("topup_fee_percent", sa.String(length=16), nullable=False),
        sa.Column("topup_fixed_fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("unload_fee_percent", sa.String(length=16), nullable=False),
        sa.Column("unload_fixed_fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("decline_fee_minor", sa.BigInteger(), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_fee_schedules_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["tier_id"],
            ["tiers.id"],
            name=op.f("fk_card_fee_schedules_tier_id_tiers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_fee_schedules")),
        sa.UniqueConstraint(
            "company_id", "tier_id", name=op.f("uq_card_fee_schedules_company_id_tier_id")
        ),
    )
    with op.batch_alter_table("card_fee_schedules", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_card_fee_schedules_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "card_auto_topups",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("rule", sa.String(length=16), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("threshold_minor", sa.BigInteger(), nullable=True),
        sa.Column("monthly_limit_minor", sa.BigInteger(), nullable=False),
        sa.Column("deposit_currency", sa.String(length=8), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_card_auto_topups_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_auto_topups_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_auto_topups")),
        sa.UniqueConstraint(
            "company_id",
            "card_id",
            "rule",
            name=op.f("uq_card_auto_topups_company_id_card_id_rule"),
        ),
    )
    with op.batch_alter_table("card_auto_topups", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_card_auto_topups_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "card_fundings",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("fee_paid_minor", sa.BigInteger(), nullable=False),
        sa.Column("provider_key", sa.String(length=64), nullable=False),
        sa.Column("provider_movement_id", sa.String(length=64), nullable=True),
        sa.Column("ledger_pending_id", sa.BigInteger(), nullable=True),
        sa.Column("trigger", sa.String(length=16), nullable=True),
        sa.Column("completed_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_card_fundings_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_fundings_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_fundings")),
        sa.UniqueConstraint(
            "company_id", "provider_key", name=op.f("uq_card_fundings_company_id_provider_key")
        ),
    )
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.create_index(
            "ix_card_fundings_card", ["company_id", "card_id", "kind", "created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_card_fundings_company_id"), ["company_id"], unique=False
        )


def _downgrade_card_funding() -> None:
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_card_fundings_company_id"))
        batch_op.drop_index("ix_card_fundings_card")

    op.drop_table("card_fundings")
    with op.batch_alter_table("card_auto_topups", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_card_auto_topups_company_id"))

    op.drop_table("card_auto_topups")
    with op.batch_alter_table("card_fee_schedules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_card_fee_schedules_company_id"))

    op.drop_table("card_fee_schedules")


# ---- cards and the sandbox card programme (cards/models.py, providers/cards/models.py) ----


def _upgrade_cards() -> None:
    op.create_table(
        "sandbox_cardprov_cards",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("card_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=160), nullable=False),
        sa.Column("holder_account_id", sa.String(length=64), nullable=False),
        sa.Column("card_type", sa.String(length=16), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("nickname", sa.String(length=100), nullable=True),
        sa.Column("budget_id", sa.String(length=64), nullable=True),
        sa.Column("design_id", sa.String(length=64), nullable=True),
        sa.Column("delivery_address", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("masked_number", sa.String(length=19), nullable=False),
        sa.Column("last4", sa.String(length=4), nullable=False),
        sa.Column("expiry_month", sa.Integer(), nullable=False),
        sa.Column("expiry_year", sa.Integer(), nullable=False),
        sa.Column("balance_minor", sa.BigInteger(), nullable=False),
        sa.Column("pin_hash", sa.String(length=128), nullable=True),
        sa.Column("shipped", sa.Boolean(), nullable=False),
        sa.Column("auto_lock", sa.Boolean(), nullable=False),
        sa.Column("locked", sa.Boolean(), nullable=False),
        sa.Column("hidden", sa.Boolean(), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "balance_minor >= 0", name=op.f("ck_sandbox_cardprov_cards_not_negative")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_cardprov_cards")),
        sa.UniqueConstraint("card_id", name=op.f("uq_sandbox_cardprov_cards_card_id")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_cardprov_cards_idempotency_key")
        ),
    )
    with op.batch_alter_table("sandbox_cardprov_cards", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_cardprov_cards_holder_account_id"),
            ["holder_account_id"],
            unique=False,
        )

    op.create_table(
        "sandbox_cardprov_movements",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("movement_id", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=160), nullable=False),
        sa.Column("card_id", sa.String(length=64), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("balance_minor", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_cardprov_movements")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_cardprov_movements_idempotency_key")
        ),
        sa.UniqueConstraint("movement_id", name=op.f("uq_sandbox_cardprov_movements_movement_id")),
    )
    with op.batch_alter_table("sandbox_cardprov_movements", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_cardprov_movements_card_id"), ["card_id"], unique=False
        )

    op.create_table(
        "sandbox_cardprov_transactions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("transaction_id", sa.String(length=64), nullable=False),
        sa.Column("card_id", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("merchant", sa.String(length=100), nullable=True),
        sa.Column("decline_reason", sa.String(length=64), nullable=True),
        sa.Column("timestamp", sa.String(length=40), nullable=True),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_cardprov_transactions")),
        sa.UniqueConstraint(
            "transaction_id", name=op.f("uq_sandbox_cardprov_transactions_transaction_id")
        ),
    )
    with op.batch_alter_table("sandbox_cardprov_transactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sandbox_cardprov_transactions_card_id"), ["card_id"], unique=False
        )

    op.create_table(
        "sandbox_cardprov_widget_tokens",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("company_id", sa.BigInteger(), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("card_id", sa.String(length=64), nullable=False),
        sa.Column("expires_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("used_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_cardprov_widget_tokens")),
        sa.UniqueConstraint(
            "token_hash", name=op.f("uq_sandbox_cardprov_widget_tokens_token_hash")
        ),
    )
    op.create_table(
        "cards",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "card_product_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("tier_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("provider_key", sa.String(length=64), nullable=False),
        sa.Column("provider_card_id", sa.String(length=64), nullable=True),
        sa.Column("external_card_id", sa.String(length=255), nullable=True),
        sa.Column("nickname", sa.String(length=100), nullable=True),
        sa.Column("card_type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("auto_lock_enabled", sa.Boolean(), nullable=False),
        sa.Column("budget_id", sa.String(length=32), nullable=True),
        sa.Column("masked_number", sa.String(length=19), nullable=True),
        sa.Column("last4", sa.String(length=4), nullable=True),
        sa.Column("expiry_month", sa.Integer(), nullable=True),
        sa.Column("expiry_year", sa.Integer(), nullable=True),
        sa.Column("phone", sa.String(length=20), nullable=False),
        sa.Column("delivery_address", sa.Text(), nullable=True),
        sa.Column("design_id", sa.String(length=64), nullable=True),
        sa.Column(
            "ledger_account_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("last_balance_minor", sa.BigInteger(), nullable=False),
        sa.Column("outstanding_fee_minor", sa.BigInteger(), nullable=False),
        sa.Column("pin_set", sa.Boolean(), nullable=False),
        sa.Column("shipped_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("activated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("cancelled_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_product_id"],
            ["card_products.id"],
            name=op.f("fk_cards_card_product_id_card_products"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_cards_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["ledger_account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_cards_ledger_account_id_ledger_accounts"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["tier_id"], ["tiers.id"], name=op.f("fk_cards_tier_id_tiers"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_cards_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cards")),
        sa.UniqueConstraint(
            "company_id",
            "provider",
            "provider_key",
            name=op.f("uq_cards_company_id_provider_provider_key"),
        ),
    )
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_cards_company_id"), ["company_id"], unique=False)
        batch_op.create_index(
            "ix_cards_company_user", ["company_id", "user_id", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_cards_provider_card_id"), ["provider_card_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_cards_user_id"), ["user_id"], unique=False)


def _downgrade_cards() -> None:
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_cards_user_id"))
        batch_op.drop_index(batch_op.f("ix_cards_provider_card_id"))
        batch_op.drop_index("ix_cards_company_user")
        batch_op.drop_index(batch_op.f("ix_cards_company_id"))

    op.drop_table("cards")
    op.drop_table("sandbox_cardprov_widget_tokens")
    with op.batch_alter_table("sandbox_cardprov_transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_cardprov_transactions_card_id"))

    op.drop_table("sandbox_cardprov_transactions")
    with op.batch_alter_table("sandbox_cardprov_movements", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_cardprov_movements_card_id"))

    op.drop_table("sandbox_cardprov_movements")
    with op.batch_alter_table("sandbox_cardprov_cards", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_cardprov_cards_holder_account_id"))

    op.drop_table("sandbox_cardprov_cards")
