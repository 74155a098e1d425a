"""card transactions

Purchases with cards (`card_transactions`, one per provider authorization id, with the running
totals the ledger is settled from) and their provider events (`card_transaction_events`, unique
per provider event id); the sandbox card provider's events carry their purchase's id. A
company's authorization rules (`authorization_rules`).

Revision ID: 0020
Revises: 0021
Create Date: 2026-11-26 17:34:41.200031
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import finplat.db.types

revision: str = "0020"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "card_transactions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("authorization_id", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("merchant", sa.String(length=100), nullable=True),
        sa.Column("mcc", sa.String(length=4), nullable=True),
        sa.Column("country", sa.String(length=2), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("requested_minor", sa.BigInteger(), nullable=False),
        sa.Column("authorized_minor", sa.BigInteger(), nullable=False),
        sa.Column("incremented_minor", sa.BigInteger(), nullable=False),
        sa.Column("reversed_minor", sa.BigInteger(), nullable=False),
        sa.Column("cleared_minor", sa.BigInteger(), nullable=False),
        sa.Column("refunded_minor", sa.BigInteger(), nullable=False),
        sa.Column("declined", sa.Boolean(), nullable=False),
        sa.Column("expired", sa.Boolean(), nullable=False),
        sa.Column("held_minor", sa.BigInteger(), nullable=False),
        sa.Column("hold_transfer_id", sa.BigInteger(), nullable=True),
        sa.Column("decline_reason", sa.String(length=32), nullable=True),
        sa.Column("response_code", sa.String(length=4), nullable=True),
        sa.Column("rules_fired", sa.Text(), nullable=False),
        sa.Column("authorized_at", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_card_transactions_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_transactions_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_transactions")),
        sa.UniqueConstraint(
            "company_id",
            "provider",
            "authorization_id",
            name=op.f("uq_card_transactions_company_id_provider_authorization_id"),
        ),
    )
    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_card_transactions_company_card", ["company_id", "card_id", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_card_transactions_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_card_transactions_held", ["held_minor", "authorized_at"], unique=False
        )

    op.create_table(
        "card_transaction_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "card_transaction_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("provider_event_id", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("decline_reason", sa.String(length=32), nullable=True),
        sa.Column("occurred_at", sa.String(length=40), nullable=True),
        sa.Column("received_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["card_transaction_id"],
            ["card_transactions.id"],
            name=op.f("fk_card_transaction_events_card_transaction_id_card_transactions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_card_transaction_events_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_transaction_events")),
        sa.UniqueConstraint(
            "company_id",
            "provider",
            "provider_event_id",
            name=op.f("uq_card_transaction_events_company_id_provider_provider_event_id"),
        ),
    )
    with op.batch_alter_table("card_transaction_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_card_transaction_events_card_transaction_id"),
            ["card_transaction_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_card_transaction_events_company_id"), ["company_id"], unique=False
        )

    with op.batch_alter_table("sandbox_cardprov_transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("authorization_id", sa.String(length=64), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_sandbox_cardprov_transactions_authorization_id"),
            ["authorization_id"],
            unique=False,
        )

    op.create_table(
        "authorization_rules",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("name", sa.String(length=100), nullable=True),
        sa.Column("description", sa.String(length=500), nullable=True),
        sa.Column("scope_type", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("card_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column(
            "bin_range_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("rule_type", sa.String(length=24), nullable=False),
        sa.Column("configuration", sa.Text(), nullable=False),
        sa.Column("response_code", sa.String(length=4), nullable=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("shadow", sa.Boolean(), nullable=False),
        sa.Column("effective_from", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("effective_to", finplat.db.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column(
            "company_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("created_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", finplat.db.types.UtcDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
            name=op.f("fk_authorization_rules_company_id_companies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_authorization_rules")),
    )
    with op.batch_alter_table("authorization_rules", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_authorization_rules_company_id"), ["company_id"], unique=False
        )
        batch_op.create_index(
            "ix_authorization_rules_company_priority", ["company_id", "priority"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("authorization_rules", schema=None) as batch_op:
        batch_op.drop_index("ix_authorization_rules_company_priority")
        batch_op.drop_index(batch_op.f("ix_authorization_rules_company_id"))

    op.drop_table("authorization_rules")

    with op.batch_alter_table("sandbox_cardprov_transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sandbox_cardprov_transactions_authorization_id"))
        batch_op.drop_column("authorization_id")

    with op.batch_alter_table("card_transaction_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_card_transaction_events_company_id"))
        batch_op.drop_index(batch_op.f("ix_card_transaction_events_card_transaction_id"))

    op.drop_table("card_transaction_events")
    with op.batch_alter_table("card_transactions", schema=None) as batch_op:
        batch_op.drop_index("ix_card_transactions_held")
        batch_op.drop_index(batch_op.f("ix_card_transactions_company_id"))
        batch_op.drop_index("ix_card_transactions_company_card")

    op.drop_table("card_transactions")
