"""Prebuilt PostgreSQL statements on a session's own asyncpg connection.

The batched card top-ups (`finplat.cards.funding.batches.service`) do a whole batch's work in a few
statements with array parameters. Below SQLAlchemy's statement layer, each costs one round
trip and no Python per row; asyncpg prepares a text once per connection.

`connection(factory)` lends a pooled connection, on which each statement runs in autocommit;
when the factory is bound to one connection inside an open transaction (a test's, rolled back
afterwards), it lends that one, and each statement gets a savepoint of its own, so a failing
statement undoes only itself there too.

asyncpg forgets a prepared statement after `STATEMENT_LIFETIME_SECONDS` (set on the engine's
connections) and prepares it again: a plan made while a table was nearly empty (a fresh
database) would otherwise keep scanning it whole once it has grown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from finplat.db.postgres_reads import LazyBeginConnection

STATEMENT_LIFETIME_SECONDS = 10


def serves(factory: async_sessionmaker[AsyncSession]) -> bool:
    """Whether the factory's database is one `connection` lends connections of (PostgreSQL)."""
    bind = factory.kw.get("bind")
    return isinstance(bind, AsyncConnection | AsyncEngine) and bind.dialect.name == "postgresql"


@asynccontextmanager
async def connection(
    factory: async_sessionmaker[AsyncSession],
) -> AsyncIterator[asyncpg.Connection]:
    """An asyncpg connection of the factory's database for the block (PostgreSQL only),
    without a session: no ORM state, no transaction of its own."""
    bind = factory.kw.get("bind")
    if isinstance(bind, AsyncConnection):  # a test's connection, in its transaction
        raw = (await bind.get_raw_connection()).dbapi_connection
        if bind.in_transaction() and isinstance(raw, LazyBeginConnection):
            # Begun at its first write (`finplat.db.postgres_reads`): this may be that write.
            await raw.begin_transaction()
        yield await driver(bind)
        return
    assert isinstance(bind, AsyncEngine)
    async with bind.connect() as pooled:
        yield await driver(pooled)


async def driver(connection: AsyncConnection) -> asyncpg.Connection:
    """The asyncpg connection below a SQLAlchemy connection of PostgreSQL."""
    raw = await connection.get_raw_connection()
    pg: asyncpg.Connection = raw.driver_connection
    return pg


async def fetch(pg: asyncpg.Connection, sql: str, *args: Any) -> list[asyncpg.Record]:
    """Run one statement as a unit of its own (see the module docstring)."""
    if pg.is_in_transaction():
        async with pg.transaction():
            rows: list[asyncpg.Record] = await pg.fetch(sql, *args)
            return rows
    rows = await pg.fetch(sql, *args)
    return rows
