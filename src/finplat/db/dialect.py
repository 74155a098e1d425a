"""The few statements whose SQL differs between PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession


def insert_ignoring_conflicts(session: AsyncSession, table: Table | Any) -> Any:
    """`INSERT ... ON CONFLICT DO NOTHING` for the session's database."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    return sqlite.insert(table).on_conflict_do_nothing()


def for_update(stmt: Select[Any], *, skip_locked: bool = False) -> Select[Any]:
    """Row locks on PostgreSQL. SQLite needs none: `BEGIN IMMEDIATE` already makes each
    transaction the only writer."""
    return stmt.with_for_update(skip_locked=skip_locked)


def is_postgresql(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"
