"""A prebuilt Core statement run below SQLAlchemy's execution (on PostgreSQL's driver) does
what `Connection.execute` does: the same rows changed and returned, the column defaults and
bind processing of its table, the session's transaction, SQLAlchemy's errors, and the
statement shown to `before_cursor_execute` listeners."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Table, bindparam, event, insert, select, text, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.companies.models import Company
from finplat.db import driver_statements
from finplat.kit.clock import reset_clock, set_clock
from tests.databases import backend
from tests.isolated import isolated

COMPANIES = Company.__table__
assert isinstance(COMPANIES, Table)
RENAME = (
    update(COMPANIES)
    .where(COMPANIES.c.id == bindparam("c_id"))
    .values(name=bindparam("c_name"), updated_at=bindparam("c_at"))
)
NAME_OF = select(COMPANIES.c.name).where(COMPANIES.c.id == bindparam("c_id"))
NEW_COMPANY = insert(COMPANIES).returning(COMPANIES.c.id)
# Its SET clause is the values' columns; `updated_at` is the table's `onupdate`.
CHANGE = update(COMPANIES).where(COMPANIES.c.id == bindparam("c_id"))
AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


async def new_company(session: AsyncSession, name: str) -> int:
    connection = await session.connection()
    found = await driver_statements.returning(
        connection, NEW_COMPANY, {"name": name, "webhook_secret": "whsec_driver"}
    )
    return int(found[0][0])


async def test_an_update_answers_the_rows_it_changed(session: AsyncSession) -> None:
    company_id = await new_company(session, "Before Ltd")
    connection = await session.connection()
    changed = await driver_statements.execute(
        connection, RENAME, {"c_id": company_id, "c_name": "After Ltd", "c_at": AT}
    )
    unknown = await driver_statements.execute(
        connection, RENAME, {"c_id": company_id + 1000, "c_name": "Nobody", "c_at": AT}
    )
    assert (changed, unknown) == (1, 0)
    assert (await session.get(Company, company_id)).name == "After Ltd"  # type: ignore[union-attr]


async def test_a_returning_read_sees_the_sessions_own_writes(session: AsyncSession) -> None:
    company_id = await new_company(session, "Seen Ltd")
    connection = await session.connection()
    rows = await driver_statements.returning(connection, NAME_OF, {"c_id": company_id})
    assert [tuple(row) for row in rows] == [("Seen Ltd",)]


async def test_an_insert_computes_the_tables_python_defaults_and_processes_its_values(
    session: AsyncSession,
) -> None:
    set_clock(lambda: AT)
    try:
        company_id = await new_company(session, "Defaults Ltd")
    finally:
        reset_clock()
    company = await session.get(Company, company_id)
    assert company is not None
    assert company.created_at == AT
    assert company.is_mor is False
    assert company.default_card_provider == "cardprov"
    # Sealed on the way in by the column's type, as SQLAlchemy's execution seals it.
    assert company.webhook_secret == "whsec_driver"
    stored = await session.execute(
        text("SELECT webhook_secret FROM companies WHERE id = :id"), {"id": company_id}
    )
    assert stored.scalar_one() != "whsec_driver"


async def test_an_update_built_without_values_sets_the_values_columns_and_its_onupdate(
    session: AsyncSession,
) -> None:
    company_id = await new_company(session, "Plain Ltd")
    connection = await session.connection()
    set_clock(lambda: AT)
    try:
        changed = await driver_statements.execute(
            connection, CHANGE, {"c_id": company_id, "name": "Changed Ltd"}
        )
    finally:
        reset_clock()
    assert changed == 1
    company = await session.get(Company, company_id, populate_existing=True)
    assert company is not None
    assert (company.name, company.updated_at) == ("Changed Ltd", AT)


async def test_each_of_many_values_runs_in_order(session: AsyncSession) -> None:
    first, second = await new_company(session, "One Ltd"), await new_company(session, "Two Ltd")
    connection = await session.connection()
    await driver_statements.execute_many(
        connection,
        RENAME,
        [
            {"c_id": first, "c_name": "First Ltd", "c_at": AT},
            {"c_id": second, "c_name": "Second Ltd", "c_at": AT},
            {"c_id": first, "c_name": "First Again Ltd", "c_at": AT},
        ],
    )
    names = [
        (await driver_statements.returning(connection, NAME_OF, {"c_id": c}))[0][0]
        for c in (first, second)
    ]
    assert names == ["First Again Ltd", "Second Ltd"]


async def test_a_database_error_is_sqlalchemys_error(session: AsyncSession) -> None:
    company_id = await new_company(session, "Error Ltd")
    connection = await session.connection()
    with pytest.raises(sa_exc.IntegrityError):  # the name is NOT NULL
        await driver_statements.execute(
            connection, RENAME, {"c_id": company_id, "c_name": None, "c_at": AT}
        )


async def test_listeners_of_the_connection_see_each_statement(session: AsyncSession) -> None:
    company_id = await new_company(session, "Counted Ltd")
    connection = await session.connection()
    seen: list[str] = []

    def before(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        seen.append(sql.split(" ", 1)[0])

    sync = connection.sync_connection
    assert sync is not None
    event.listen(sync, "before_cursor_execute", before)
    try:
        await driver_statements.execute(
            connection, RENAME, {"c_id": company_id, "c_name": "Seen Ltd", "c_at": AT}
        )
        await driver_statements.returning(connection, NAME_OF, {"c_id": company_id})
    finally:
        event.remove(sync, "before_cursor_execute", before)
    assert seen == ["UPDATE", "SELECT"]


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL's driver")
async def test_a_write_joins_the_sessions_transaction_and_its_rollback_undoes_it() -> None:
    async with isolated("driver-rollback") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            connection = await session.connection()
            # A read first: in autocommit, no transaction begun (`finplat.db.postgres_reads`).
            await driver_statements.returning(connection, NAME_OF, {"c_id": env.company_id})
            raw: Any = (await connection.get_raw_connection()).driver_connection
            assert not raw.is_in_transaction()
            await driver_statements.execute(
                connection, RENAME, {"c_id": env.company_id, "c_name": "Undone Ltd", "c_at": AT}
            )
            assert raw.is_in_transaction()
            await session.rollback()
        async with factory() as session:
            company = await session.get(Company, env.company_id)
            assert company is not None
            assert company.name == "Isolated"


async def test_a_returned_row_is_read_by_name_through_its_columns_types(
    session: AsyncSession,
) -> None:
    company_id = await new_company(session, "Typed Ltd")
    connection = await session.connection()
    renamed = RENAME.returning(COMPANIES.c.name, COMPANIES.c.updated_at, COMPANIES.c.webhook_secret)
    rows = await driver_statements.returning(
        connection, renamed, {"c_id": company_id, "c_name": "Typed Again Ltd", "c_at": AT}
    )
    assert len(rows) == 1
    assert rows[0].name == rows[0][0] == "Typed Again Ltd"
    assert rows[0].updated_at == AT
    assert rows[0].updated_at.tzinfo is not None
    assert rows[0].webhook_secret == "whsec_driver"  # unsealed by its type on the way out


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL's driver")
async def test_a_lost_connection_is_invalidated_and_not_lent_again() -> None:
    async with isolated("driver-lost") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            connection = await session.connection()
            raw: Any = (await connection.get_raw_connection()).driver_connection
            pid = raw.get_server_pid()
            async with factory() as other:
                await other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            with pytest.raises(sa_exc.DBAPIError) as raised:
                await driver_statements.execute(
                    connection, RENAME, {"c_id": env.company_id, "c_name": "Lost Ltd", "c_at": AT}
                )
            assert raised.value.connection_invalidated
            assert connection.invalidated
            await session.rollback()
        async with factory() as session:  # the pool lends a live connection
            company = await session.get(Company, env.company_id)
            assert company is not None
            assert company.name == "Isolated"


async def test_the_sessions_connection_is_kept_for_its_transaction_and_asked_for_after_it() -> None:
    async with isolated("driver-connection-kept") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            first = await driver_statements.connection_of(session)
            assert await driver_statements.connection_of(session) is first
            assert await session.connection() is first
            await driver_statements.execute(
                first, RENAME, {"c_id": env.company_id, "c_name": "Kept Ltd", "c_at": AT}
            )
            await session.commit()
            after = await driver_statements.connection_of(session)
            assert after is await session.connection()
            assert not after.closed
            rows = await driver_statements.returning(after, NAME_OF, {"c_id": env.company_id})
            assert rows[0].name == "Kept Ltd"


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL's driver")
async def test_a_lost_connection_is_not_kept_for_the_next_transaction() -> None:
    async with isolated("driver-connection-lost") as env:
        factory: async_sessionmaker[AsyncSession] = env.app.state.session_factory
        async with factory() as session:
            lost = await driver_statements.connection_of(session)
            raw: Any = (await lost.get_raw_connection()).driver_connection
            async with factory() as other:
                await other.execute(
                    text("SELECT pg_terminate_backend(:pid)"), {"pid": raw.get_server_pid()}
                )
            with pytest.raises(sa_exc.DBAPIError):
                await driver_statements.execute(
                    lost, RENAME, {"c_id": env.company_id, "c_name": "Lost Ltd", "c_at": AT}
                )
            await session.rollback()
            live = await driver_statements.connection_of(session)
            rows = await driver_statements.returning(live, NAME_OF, {"c_id": env.company_id})
            assert rows[0].name == "Isolated"
