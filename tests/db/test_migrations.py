"""The migrations build exactly the schema the models describe (no drift either way)."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import AsyncEngine

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
