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

from finplat.config import Settings
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


def _company_with_deliveries(
    db: sqlite3.Connection, deliveries: list[tuple[str, str, int]]
) -> None:
    db.execute(
        "INSERT INTO companies (id, name, is_mor, webhook_secret, default_card_provider, "
        "created_at, updated_at) VALUES (1, 'Acme', 0, ?, 'cardprov', "
        "'2026-11-21 00:00:00', '2026-11-21 00:00:00')",
        ("whsec_" + "A" * 43 + "=",),
    )
    db.execute(
        "INSERT INTO events (id, company_id, type, domain, provider, body, created_at) "
        "VALUES ('evt_1', 1, 'webhook.test', 'webhook', 'finplat', '{}', '2026-11-21 00:00:00')"
    )
    for delivery_id, status, attempts in deliveries:
        db.execute(
            "INSERT INTO webhook_deliveries (id, company_id, event_id, status, attempts, "
            "created_at) VALUES (?, 1, 'evt_1', ?, ?, '2026-11-21 00:00:00')",
            (delivery_id, status, attempts),
        )


def test_queued_deliveries_with_failed_attempts_become_retrying_at_0017(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, "0016")
    with sqlite3.connect(path) as db:
        _company_with_deliveries(
            db, [("whd_new", "pending", 0), ("whd_again", "pending", 3), ("whd_gone", "failed", 16)]
        )
    command.upgrade(config, "0017")
    statuses = "SELECT id, status FROM webhook_deliveries ORDER BY id"
    with sqlite3.connect(path) as db:
        upgraded = db.execute(statuses).fetchall()
    command.downgrade(config, "0016")
    with sqlite3.connect(path) as db:
        downgraded = db.execute(statuses).fetchall()
    assert upgraded == [("whd_again", "retrying"), ("whd_gone", "failed"), ("whd_new", "pending")]
    assert downgraded == [("whd_again", "pending"), ("whd_gone", "failed"), ("whd_new", "pending")]


def test_webhook_secrets_are_sealed_at_0018_and_opened_again_on_downgrade(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "upgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, "0017")
    secret = "whsec_" + "A" * 43 + "="
    with sqlite3.connect(path) as db:
        _company_with_deliveries(db, [])
    command.upgrade(config, "0018")
    with sqlite3.connect(path) as db:
        [sealed] = db.execute("SELECT webhook_secret FROM companies").fetchone()
    command.downgrade(config, "0017")
    with sqlite3.connect(path) as db:
        [opened] = db.execute("SELECT webhook_secret FROM companies").fetchone()
    assert secret not in sealed
    assert settings.secret_keyring().open(sealed, purpose="companies.webhook_secret") == secret
    assert opened == secret


def test_going_back_before_0019_dates_an_undated_proof_of_address_by_its_application(
    tmp_path: Path,
) -> None:
    path = tmp_path / "downgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, "0019")
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
