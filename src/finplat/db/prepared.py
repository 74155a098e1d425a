"""Prebuilt PostgreSQL statements on a session's own asyncpg connection.

The batched card top-ups (`finplat.cards.topup_batches`) do a whole batch's work in a few
statements with array parameters. Below SQLAlchemy's statement layer, each costs one round
trip and no Python per row; asyncpg prepares a text once per connection.

A statement runs in autocommit when the session has no transaction open (a pooled connection
in production); inside an open transaction (the rolled-back transaction of a test) it gets a
savepoint of its own, so a failing statement undoes only itself, as in autocommit. The session
is committed by its owner afterwards: that releases the test's savepoint and is a no-op when
nothing began one.

asyncpg forgets a prepared statement after `STATEMENT_LIFETIME_SECONDS` (set on the engine's
connections) and prepares it again: a plan made while a table was nearly empty (a fresh
database) would otherwise keep scanning it whole once it has grown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession

STATEMENT_LIFETIME_SECONDS = 10


async def connection_of(session: AsyncSession) -> asyncpg.Connection:
    """The asyncpg connection under `session` (PostgreSQL only)."""
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    driver: asyncpg.Connection = raw.driver_connection
    return driver


async def fetch(pg: asyncpg.Connection, sql: str, *args: Any) -> list[asyncpg.Record]:
    """Run one statement as a unit of its own (see the module docstring)."""
    if pg.is_in_transaction():
        async with pg.transaction():
            rows: list[asyncpg.Record] = await pg.fetch(sql, *args)
            return rows
    rows = await pg.fetch(sql, *args)
    return rows


@asynccontextmanager
async def transaction(pg: asyncpg.Connection) -> AsyncIterator[asyncpg.Connection]:
    """Several statements as one unit: a transaction, or a savepoint inside an open one."""
    async with pg.transaction():
        yield pg
