"""The few statements whose SQL differs between PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession


def _insert(session: AsyncSession, table: Table | Any) -> Any:
    """The session's database's own `INSERT`, which knows `ON CONFLICT`."""
    return (postgresql if is_postgresql(session) else sqlite).insert(table)


def insert_ignoring_conflicts(session: AsyncSession, table: Table | Any) -> Any:
    """`INSERT ... ON CONFLICT DO NOTHING` for the session's database."""
    return _insert(session, table).on_conflict_do_nothing()


def inserts_ignoring_conflicts(table: Table | Any) -> dict[str, Any]:
    """`INSERT ... ON CONFLICT DO NOTHING` into `table` (or a mapped class, for ORM objects
    returned) for each database, by dialect name: for a statement built once and run with its
    values bound (the columns are the values')."""
    return {
        "postgresql": postgresql.insert(table).on_conflict_do_nothing(),
        "sqlite": sqlite.insert(table).on_conflict_do_nothing(),
    }


def upsert(
    session: AsyncSession, table: Table | Any, *, keys: list[str], values: dict[str, Any]
) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO UPDATE` setting every other value: one statement, so
    parallel writers of the same key cannot both insert."""
    stmt = _insert(session, table).values(**values)
    changed = {name: value for name, value in values.items() if name not in keys}
    return stmt.on_conflict_do_update(index_elements=keys, set_=changed)


def for_update(stmt: Select[Any], *, skip_locked: bool = False) -> Select[Any]:
    """Row locks on PostgreSQL. SQLite needs none: `BEGIN IMMEDIATE` already makes each
    transaction the only writer."""
    return stmt.with_for_update(skip_locked=skip_locked)


def is_postgresql(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"
