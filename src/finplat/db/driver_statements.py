"""Prebuilt Core statements run on PostgreSQL's asyncpg connection itself, in the session's
transaction.

SQLAlchemy's execution of a Core statement (its execution context, parameter processing,
cursor adaptation and result) costs nearly three times what asyncpg itself costs for the same
round trip (165 against 60 µs of CPU, docs/performance-log.md), and the money paths' ledger
statements run several times per request. Here each statement is compiled once for PostgreSQL
(its text, the order of its `$n` parameters, their bind processors and defaults) and then run
on the session's own driver connection: the same text, the same values, the same
transaction. The transaction is begun first for anything but a plain read, as the
connection's own cursors do (`finplat.db.postgres_reads`); an error of the database is raised
as SQLAlchemy raises it (`IntegrityError`, `OperationalError`, ...), so callers and the error
handlers see no difference; listeners of `before_cursor_execute` (the statement counts of the
tests and `bench/statements.py`) see each statement. On any other database the statement runs
through SQLAlchemy as before.

What `returning` answers is what `Connection.execute` would: rows by position and by column
name, each value through its type's result processing.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import asyncpg
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from finplat.db.postgres_reads import LazyBeginConnection, reads_only

T = TypeVar("T")


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    defaults: dict[str, Any]
    # Columns with a Python default or `onupdate` the values do not set: computed per row,
    # as SQLAlchemy's execution context does.
    computed: tuple[tuple[str, Callable[[], Any]], ...]
    processors: dict[str, Callable[[Any], Any]]
    reads_only: bool
    # A returned row as SQLAlchemy would hand it over: by position and by column name, each
    # value through its type's result processing.
    row: Callable[[asyncpg.Record], Any]

    def arguments(self, params: dict[str, Any]) -> list[Any]:
        if self.computed:
            params = {**params, **{name: compute() for name, compute in self.computed}}
        values = []
        for name in self.names:
            value = params[name] if name in params else self.defaults[name]
            process = self.processors.get(name)
            values.append(value if process is None else process(value))
        return values


# By statement and the names of the values it runs with: an INSERT or UPDATE built without
# `values()` takes its columns from them, as `Connection.execute` does.
_COMPILED: dict[tuple[ClauseElement, frozenset[str]], _Compiled] = {}
_KNOWN_LIMIT = 2048


def _compiled(
    connection: AsyncConnection, statement: ClauseElement, keys: frozenset[str]
) -> _Compiled:
    known = _COMPILED.get((statement, keys))
    if known is None:
        if len(_COMPILED) >= _KNOWN_LIMIT:  # statements are built once each; a bound keeps
            _COMPILED.clear()  # one built per call by mistake from growing it
        compiled = cast(
            SQLCompiler,
            statement.compile(dialect=connection.dialect, column_keys=sorted(keys)),
        )
        if "POSTCOMPILE" in compiled.string:  # an expanding IN: its text depends on the values
            raise ValueError("a statement with an expanding parameter cannot be prebuilt")
        known = _COMPILED[(statement, keys)] = _Compiled(
            sql=compiled.string,
            names=tuple(compiled.positiontup or ()),
            defaults=dict(compiled.construct_params(_check=False)),
            computed=tuple(
                (column.key, _python_default(column, insert=column in compiled.insert_prefetch))
                for column in (*compiled.insert_prefetch, *compiled.update_prefetch)
            ),
            processors=_processors(compiled),
            reads_only=reads_only(compiled.string),
            row=_row_of(compiled, connection),
        )
    return known


def _row_of(compiled: SQLCompiler, connection: AsyncConnection) -> Callable[[asyncpg.Record], Any]:
    columns = compiled._result_columns
    shape = namedtuple("Row", [c.keyname for c in columns], rename=True)  # type: ignore[misc]
    processors = [c.type._cached_result_processor(connection.dialect, None) for c in columns]
    if not any(processors):
        return lambda record: shape(*record)
    return lambda record: shape(
        *(value if p is None else p(value) for p, value in zip(processors, record, strict=True))
    )


def _processors(compiled: SQLCompiler) -> dict[str, Callable[[Any], Any]]:
    """Each parameter's bind processor (its type's conversion to the driver's value)."""
    found: dict[str, Callable[[Any], Any]] = {}
    for name, process in compiled._bind_processors.items():
        if not callable(process):  # a tuple's, one per element: tuple IN is expanding
            raise ValueError("a statement with a tuple parameter cannot be prebuilt")
        found[name] = process
    return found


def _python_default(column: Any, *, insert: bool) -> Callable[[], Any]:
    """A column's Python-side default (on insert) or `onupdate` (on update), as a function of
    nothing: finplat's are constants and functions of no argument (`utcnow`)."""
    default = column.default if insert else column.onupdate
    if default is None or not (default.is_scalar or default.is_callable):
        raise ValueError(f"{column}: only scalar and callable Python defaults can be computed")
    if default.is_scalar:
        value = default.arg
        return lambda: value
    arg = default.arg
    return lambda: arg(None)


async def _sent(
    connection: AsyncConnection,
    compiled: _Compiled,
    args: Any,
    many: bool,
    send: Callable[[asyncpg.Connection], Awaitable[T]],
) -> T:
    """`send` the statement on the session's driver connection: shown first to the
    connection's `before_cursor_execute` listeners, and unless it only reads, in the session's
    transaction, begun if need be."""
    sync = connection.sync_connection
    assert sync is not None
    # The pooled connection the session holds, without `get_raw_connection`'s trip through a
    # greenlet; an invalidated one is checked out again there.
    raw = await connection.get_raw_connection() if sync.invalidated else sync.connection
    adapted = cast(LazyBeginConnection, raw.dbapi_connection)
    if sync._has_events or sync.engine._has_events:
        sync.dispatch.before_cursor_execute(sync, None, compiled.sql, args, None, many)
    try:  # the BEGIN too: a lost connection fails there first
        if not compiled.reads_only and adapted._transaction is None:
            await adapted.begin_transaction()
        return await send(cast(asyncpg.Connection, raw.driver_connection))
    except Exception as error:
        raise await _failed(connection, adapted, compiled, args, error) from error


async def _failed(
    connection: AsyncConnection,
    adapted: LazyBeginConnection,
    compiled: _Compiled,
    args: Any,
    error: Exception,
) -> Exception:
    """The error as SQLAlchemy would have raised it: the driver adapter's translation
    (`asyncpg`'s class to the DB-API's), wrapped as `sqlalchemy.exc`'s; a lost connection is
    invalidated, so that the pool does not lend it again."""
    try:
        adapted._handle_exception(error)
    except Exception as translated:  # the adapter always raises
        dbapi_error = connection.dialect.loaded_dbapi.Error
        if not isinstance(translated, dbapi_error):
            return translated
        lost = connection.dialect.is_disconnect(translated, cast(Any, adapted), None)
        if lost:
            await connection.invalidate(translated)
        return cast(
            Exception,
            sa_exc.DBAPIError.instance(
                compiled.sql, args, translated, dbapi_error, connection_invalidated=lost
            ),
        )
    return error  # pragma: no cover - `_handle_exception` never returns


# Where a session keeps its connection for `connection_of`, with the transaction it is in.
_HELD = "finplat.driver_connection"


async def connection_of(session: AsyncSession) -> AsyncConnection:
    """The session's connection, in its transaction: `session.connection()`, kept for the
    transaction's life. Each call of `session.connection()` costs 22 µs of CPU (a trip
    through a greenlet to the connection the transaction already holds), and the money paths
    ask for it before every statement they run here."""
    transaction = session.sync_session.get_transaction()
    held = session.info.get(_HELD)
    if held is not None and transaction is not None and held[0] is transaction:
        connection: AsyncConnection = held[1]
        if not connection.closed and not connection.invalidated:
            return connection
    connection = await session.connection()
    session.info[_HELD] = (session.sync_session.get_transaction(), connection)
    return connection


async def execute(
    connection: AsyncConnection, statement: ClauseElement, params: dict[str, Any]
) -> int:
    """Run a statement built once; the number of rows it changed."""
    if connection.dialect.name != "postgresql":
        result = await connection.execute(statement, params)  # type: ignore[call-overload]
        return int(result.rowcount)
    compiled = _compiled(connection, statement, frozenset(params))
    args = compiled.arguments(params)
    status = await _sent(
        connection, compiled, args, False, lambda pg: pg.execute(compiled.sql, *args)
    )
    count = status.rpartition(" ")[2]
    return int(count) if count.isdigit() else 0


async def execute_many(
    connection: AsyncConnection, statement: ClauseElement, params: Sequence[dict[str, Any]]
) -> None:
    """Run a statement built once for each set of values, in the order given."""
    if not params:
        return
    if connection.dialect.name != "postgresql":
        await connection.execute(statement, list(params))  # type: ignore[call-overload]
        return
    compiled = _compiled(connection, statement, frozenset(params[0]))
    args = [compiled.arguments(one) for one in params]
    await _sent(connection, compiled, args, True, lambda pg: pg.executemany(compiled.sql, args))


async def returning(
    connection: AsyncConnection, statement: ClauseElement, params: dict[str, Any]
) -> Sequence[Any]:
    """Run a statement built once; the rows it returns (by position and by column name)."""
    if connection.dialect.name != "postgresql":
        result = await connection.execute(statement, params)  # type: ignore[call-overload]
        return cast(Sequence[Any], result.all())
    compiled = _compiled(connection, statement, frozenset(params))
    args = compiled.arguments(params)
    rows: list[asyncpg.Record] = await _sent(
        connection, compiled, args, False, lambda pg: pg.fetch(compiled.sql, *args)
    )
    return [compiled.row(record) for record in rows]
