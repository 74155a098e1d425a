"""Alembic environment: async engine, one advisory lock on PostgreSQL so that several
processes starting at once apply each migration exactly once."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from finplat.db.models import metadata

# An arbitrary constant: the key of the PostgreSQL advisory lock held while migrating.
MIGRATION_LOCK_KEY = 7_410_214_001


def _run(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        transaction_per_migration=False,
        # `finplat migrate` reports each migration applied.
        on_version_apply=context.config.attributes.get("on_version_apply"),
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


url = context.config.attributes.get("database_url") or context.config.get_main_option(
    "sqlalchemy.url"
)
if not url:
    raise RuntimeError("no database URL given to the migration environment")
if context.is_offline_mode():
    context.configure(url=url, target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async(url))
