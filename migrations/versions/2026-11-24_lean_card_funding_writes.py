"""lean card funding writes

What a card top-up writes, made cheaper to write (docs/performance.md):
* the ledger journal (`ledger_transfers`, `ledger_entries`) loses its foreign keys, the
  transfers' company index and the entries' account index: the checks locked a parent row per
  inserted row, `finplat ledger verify` checks the references instead, and nothing reads
  entries by account (nor sandbox movements by card, whose index goes too);
* `idempotency_keys` and `card_fundings` lose their company index (the company leads their
  unique keys); idempotency keys are purged by `created_at`, so finishing one changes no
  indexed column;
* on PostgreSQL, the tables a top-up updates keep room on their pages (fillfactor), so the
  updates stay on the page and touch no index;
* on PostgreSQL, `finplat_assert(condition, message)` lets one statement refuse to go on
  (SQLSTATE P0001) when what it locked no longer holds what it was planned on.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ASSERT = """
CREATE FUNCTION finplat_assert(condition boolean, message text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF condition IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = message;
  END IF;
  RETURN true;
END
$$
"""

_FILLFACTOR = {
    "ledger_transfers": 80,
    "idempotency_keys": 60,
    "card_fundings": 70,
    "cards": 80,
    "sandbox_cardprov_cards": 70,
}


def _is_postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.drop_constraint(
            "fk_ledger_entries_transfer_id_ledger_transfers", type_="foreignkey"
        )
        batch_op.drop_constraint("fk_ledger_entries_account_id_ledger_accounts", type_="foreignkey")
        batch_op.drop_index("ix_ledger_entries_account_shard")
    with op.batch_alter_table("sandbox_cardprov_movements", schema=None) as batch_op:
        batch_op.drop_index("ix_sandbox_cardprov_movements_card_id")
    with op.batch_alter_table("ledger_transfers", schema=None) as batch_op:
        batch_op.drop_constraint(
            "fk_ledger_transfers_pending_id_ledger_transfers", type_="foreignkey"
        )
        batch_op.drop_constraint("fk_ledger_transfers_company_id_companies", type_="foreignkey")
        batch_op.drop_index("ix_ledger_transfers_company_id")
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_idempotency_keys_company_id")
        batch_op.drop_index("ix_idempotency_keys_completed_at")
        batch_op.create_index("ix_idempotency_keys_created_at", ["created_at"], unique=False)
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.drop_index("ix_card_fundings_company_id")
    if _is_postgresql():
        for table, fillfactor in _FILLFACTOR.items():
            op.execute(f"ALTER TABLE {table} SET (fillfactor = {fillfactor})")
        op.execute(_ASSERT)


def downgrade() -> None:
    if _is_postgresql():
        op.execute("DROP FUNCTION finplat_assert(boolean, text)")
        for table in _FILLFACTOR:
            op.execute(f"ALTER TABLE {table} RESET (fillfactor)")
    with op.batch_alter_table("card_fundings", schema=None) as batch_op:
        batch_op.create_index("ix_card_fundings_company_id", ["company_id"], unique=False)
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_idempotency_keys_created_at")
        batch_op.create_index("ix_idempotency_keys_completed_at", ["completed_at"], unique=False)
        batch_op.create_index("ix_idempotency_keys_company_id", ["company_id"], unique=False)
    with op.batch_alter_table("ledger_transfers", schema=None) as batch_op:
        batch_op.create_index("ix_ledger_transfers_company_id", ["company_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_ledger_transfers_company_id_companies",
            "companies",
            ["company_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_ledger_transfers_pending_id_ledger_transfers",
            "ledger_transfers",
            ["pending_id"],
            ["id"],
        )
    with op.batch_alter_table("sandbox_cardprov_movements", schema=None) as batch_op:
        batch_op.create_index("ix_sandbox_cardprov_movements_card_id", ["card_id"], unique=False)
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_ledger_entries_account_shard", ["account_id", "shard"], unique=False
        )
        batch_op.create_foreign_key(
            "fk_ledger_entries_account_id_ledger_accounts",
            "ledger_accounts",
            ["account_id"],
            ["id"],
        )
        batch_op.create_foreign_key(
            "fk_ledger_entries_transfer_id_ledger_transfers",
            "ledger_transfers",
            ["transfer_id"],
            ["id"],
        )
