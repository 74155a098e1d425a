"""The few statements whose SQL differs between PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from sqlalchemy import Select, Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

ModelT = TypeVar("ModelT")
# `create_unless_taken`'s statements, per model, per database.
_CREATED_UNLESS_TAKEN: dict[type[Any], dict[str, Any]] = {}


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


async def create_unless_taken(
    session: AsyncSession, model: type[ModelT], values: dict[str, Any]
) -> ModelT | None:
    """The row inserted and loaded as the model's object, or None when a unique key of its
    table already holds such a row: one statement (`INSERT ... ON CONFLICT DO NOTHING
    RETURNING`), the key deciding, built once per model and database."""
    statements = _CREATED_UNLESS_TAKEN.get(model)
    if statements is None:
        table = cast(Table, model.__table__)  # type: ignore[attr-defined]
        statements = _CREATED_UNLESS_TAKEN[model] = {
            name: select(model).from_statement(statement.returning(*table.c))
            for name, statement in inserts_ignoring_conflicts(table).items()
        }
    dialect = session.get_bind().dialect.name
    return cast("ModelT | None", (await session.scalars(statements[dialect], values)).one_or_none())


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
