"""SQLite for the async engine, run on the event loop's own thread.

aiosqlite runs each connection on a thread of its own and hands every call over to it: a
statement is four such calls (open a cursor, execute, fetch, close), each a round of futures,
a wake-up of the event loop and a switch of the GIL, and they cost several times the
statement itself (two fifths of a top-up's CPU on the default database went there). SQLite's
own work on a statement is microseconds, so it is cheaper done where the request runs.

Nothing may block the loop for long in return: the process has one connection
(`finplat.db.engine`), so the only wait left is for another process holding the write lock,
and a transaction waits for that in the loop (`begin_immediate`), not in SQLite's busy handler.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import Any, Literal, cast

from sqlalchemy import exc as sa_exc
from sqlalchemy import pool
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import AdaptedConnection
from sqlalchemy.util.concurrency import await_

DRIVER = "finplat_inline"

IsolationLevel = Literal["DEFERRED", "EXCLUSIVE", "IMMEDIATE"] | None


async def _now(call: Any, *args: Any) -> Any:
    """Run `call` inside an awaited coroutine that never suspends: SQLAlchemy's async engine
    requires every statement to await something (it refuses a driver that never does), and
    this costs two greenlet switches instead of a trip through the event loop."""
    return call(*args)


class InlineCursor:
    """A sqlite3 cursor whose statements run through `_now`."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    def execute(self, operation: str, parameters: Any = ()) -> InlineCursor:
        await_(_now(self._cursor.execute, operation, parameters))
        return self

    def executemany(self, operation: str, parameters: Any) -> InlineCursor:
        await_(_now(self._cursor.executemany, operation, parameters))
        return self

    async def _async_soft_close(self) -> None:
        """The async engine closes a driver's cursor early here; a sqlite3 cursor keeps its
        rows until they are read, so it stays open."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class InlineConnection(AdaptedConnection):
    """A sqlite3 connection as the async engine's DBAPI connection."""

    __slots__ = ("_sqlite",)

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._sqlite = connection
        self._connection = cast(Any, connection)  # what `driver_connection` answers

    def cursor(self) -> InlineCursor:
        return InlineCursor(self._sqlite.cursor())

    def commit(self) -> None:
        await_(_now(self._sqlite.commit))

    def rollback(self) -> None:
        await_(_now(self._sqlite.rollback))

    def close(self) -> None:
        self._sqlite.close()

    @property
    def isolation_level(self) -> IsolationLevel:
        return self._sqlite.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: IsolationLevel) -> None:
        self._sqlite.isolation_level = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sqlite, name)


class InlineSqliteDialect(SQLiteDialect_pysqlite):
    """The standard library's sqlite3, called straight from SQLAlchemy's greenlet."""

    driver = DRIVER
    supports_statement_cache = True
    is_async = True

    @classmethod
    def get_pool_class(cls, url: URL) -> type[pool.Pool]:
        if cls._is_url_file_db(url):
            return pool.AsyncAdaptedQueuePool
        return pool.StaticPool

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        return InlineConnection(self.loaded_dbapi.connect(*cargs, **cparams))

    def get_driver_connection(self, connection: Any) -> Any:
        return connection._sqlite


registry.register(f"sqlite.{DRIVER}", __name__, "InlineSqliteDialect")


def inline_url(url: URL | str) -> URL:
    """`sqlite+aiosqlite://…` (the configured spelling) served by this dialect."""
    parsed = make_url(url)
    if parsed.drivername == "sqlite+aiosqlite":
        return parsed.set(drivername=f"sqlite+{DRIVER}")
    return parsed


def begin_immediate(dbapi_connection: Any, wait_seconds: float) -> None:
    """Take the write lock, waiting in the event loop while another process holds it.

    The connection's busy timeout is zero, so SQLite answers "locked" at once instead of
    sleeping on the loop's thread; the last try after `wait_seconds` raises that answer."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.001
    while True:
        try:
            dbapi_connection.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if "database is locked" not in str(error):
                raise
            if time.monotonic() >= deadline:
                raise sa_exc.OperationalError("BEGIN IMMEDIATE", None, error) from error
        await_(asyncio.sleep(delay))
        delay = min(delay * 2, 0.05)
