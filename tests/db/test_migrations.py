"""The migrations build exactly the schema the models describe (no drift either way), and
data migrations change existing rows as they say."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import AsyncEngine

from finplat.db.migrate import alembic_config
from finplat.db.models import metadata


def _differences(connection: Any) -> list[Any]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "render_as_batch": True}
    )
    return list(compare_metadata(context, metadata))


async def test_migrated_database_matches_the_models(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        differences = await connection.run_sync(_differences)
    assert differences == []


def test_card_accounts_made_before_0013_may_go_negative_after_it(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, "0012")
    with sqlite3.connect(path) as db:
        for account_id, code in ((1, "card"), (2, "master")):
            db.execute(
                "INSERT INTO ledger_accounts (id, company_id, code, owner_type, owner_id, "
                "currency, allow_negative, shard_count, created_at) "
                "VALUES (?, 1, ?, ?, '1', 'USD', 0, 1, '2026-11-21 00:00:00')",
                (account_id, code, code if code == "card" else "company"),
            )
            db.execute(
                "INSERT INTO ledger_balances (account_id, shard, posted, pending_debits, "
                "pending_credits, floor) VALUES (?, 0, 0, 0, 0, 0)",
                (account_id,),
            )
    command.upgrade(config, "0013")
    with sqlite3.connect(path) as db:
        rules = db.execute(
            "SELECT a.code, a.allow_negative, b.floor FROM ledger_accounts a "
            "JOIN ledger_balances b ON b.account_id = a.id ORDER BY a.id"
        ).fetchall()
    assert rules == [("card", 1, None), ("master", 0, 0)]


def test_going_back_before_0018_dates_an_undated_proof_of_address_by_its_application(
    tmp_path: Path,
) -> None:
    path = tmp_path / "downgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, "0018")
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO bankprov_applications (id, company_id, user_id, correlation_id, "
            "provider_account_id, requested_features, main_purpose, source_of_funds, "
            "destination_of_funds, currencies_required, annual_volume, number_of_payments, "
            "proof_of_address_type, proof_of_address_size, proof_of_address_sha256, "
            "proof_of_address_date, created_at, updated_at) VALUES (1, 1, 1, 'c', 'a', '[]', "
            "'m', 's', 'GB', 'EUR', '1+', '1+', 'PDF', 1, 'h', NULL, "
            "'2026-11-26 09:30:00.123456', '2026-11-26 09:30:00.123456')"
        )
    command.downgrade(config, "0016")
    with sqlite3.connect(path) as db:
        dated = db.execute("SELECT proof_of_address_date FROM bankprov_applications").fetchall()
    assert dated == [("2026-11-26",)]
