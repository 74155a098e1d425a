"""On PostgreSQL a plain read runs outside a transaction; the first statement that needs one
(a write, a row lock) begins it, and from there on the request is one transaction as before."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from finplat.db import prepared
from finplat.db.postgres_reads import reads_only
from tests.databases import backend
from tests.isolated import isolated

on_postgresql = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL's driver")

COMPANY_NAME = text("SELECT name FROM companies WHERE id = :id")
RENAME = text("UPDATE companies SET name = :name WHERE id = :id")


async def in_transaction(session: AsyncSession) -> bool:
    """Whether the server holds a transaction open for the session's connection."""
    raw = await (await session.connection()).get_raw_connection()
    driver: Any = raw.driver_connection
    return bool(driver.is_in_transaction())


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT companies.id FROM companies WHERE companies.id = $1",
        "  select count(*) from cards",
        "SELECT a.id FROM a JOIN b ON a.id = b.a_id WHERE a.format = $1",
    ],
)
def test_a_plain_select_is_a_read(sql: str) -> None:
    assert reads_only(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT cards.id FROM cards WHERE cards.id = $1 FOR UPDATE",
        "SELECT cards.id FROM cards WHERE cards.id = $1 FOR NO KEY UPDATE SKIP LOCKED",
        "SELECT cards.id FROM cards WHERE cards.id = $1 FOR SHARE",
        "SELECT cards.id FROM cards FOR KEY SHARE OF cards",
        "SELECT nextval('some_sequence')",
        "SELECT pg_advisory_xact_lock($1)",
        "SELECT set_config('x.y', $1, true)",
        "WITH moved AS (UPDATE cards SET balance = 0 RETURNING id) SELECT id FROM moved",
        "INSERT INTO cards (id) VALUES ($1)",
        "UPDATE cards SET balance = $1",
        "SAVEPOINT sa_savepoint_1",
    ],
)
def test_a_lock_a_write_or_a_state_change_is_not_a_read(sql: str) -> None:
    assert not reads_only(sql)


@on_postgresql
async def test_a_session_that_only_reads_opens_no_transaction() -> None:
    async with isolated("reads") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            name = (await session.execute(COMPANY_NAME, {"id": env.company_id})).scalar_one()
            assert name
            assert not await in_transaction(session)
            await session.commit()


@on_postgresql
async def test_the_first_write_begins_the_transaction_and_later_reads_see_it() -> None:
    async with isolated("firstwrite") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            before = (await session.execute(COMPANY_NAME, {"id": env.company_id})).scalar_one()
            await session.execute(RENAME, {"name": "Renamed Ltd", "id": env.company_id})
            assert await in_transaction(session)
            seen = (await session.execute(COMPANY_NAME, {"id": env.company_id})).scalar_one()
            assert seen == "Renamed Ltd"
            await session.rollback()
        async with factory() as session:
            after = (await session.execute(COMPANY_NAME, {"id": env.company_id})).scalar_one()
        assert after == before


@on_postgresql
async def test_a_row_lock_taken_first_holds_until_the_commit() -> None:
    lock = text("SELECT id FROM companies WHERE id = :id FOR UPDATE")
    lock_now = text("SELECT id FROM companies WHERE id = :id FOR UPDATE NOWAIT")
    async with isolated("rowlock") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as holder:
            await holder.execute(lock, {"id": env.company_id})
            assert await in_transaction(holder)
            async with factory() as other:
                with pytest.raises(sa_exc.DBAPIError, match="could not obtain lock"):
                    await other.execute(lock_now, {"id": env.company_id})
            await holder.commit()
        async with factory() as other:
            await other.execute(lock_now, {"id": env.company_id})
            await other.commit()


@on_postgresql
async def test_a_read_that_fails_outside_a_transaction_leaves_the_session_usable() -> None:
    async with isolated("failedread") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            with pytest.raises(sa_exc.DBAPIError):
                await session.execute(text("SELECT 1 / 0"))
            await session.rollback()
            name = (await session.execute(COMPANY_NAME, {"id": env.company_id})).scalar_one()
        assert name


@on_postgresql
async def test_a_driver_statement_on_a_tests_connection_joins_its_transaction(
    connection: AsyncConnection,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    await connection.execute(text("SELECT 1"))
    async with prepared.connection(session_factory) as pg:
        assert pg.is_in_transaction()
