"""Engine and session factory for `sqlite+aiosqlite` and `postgresql+asyncpg` (each served by a
driver of ours: `finplat.db.sqlite_inline`, `finplat.db.postgres_reads`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from finplat.config import Settings
from finplat.db.postgres_reads import lazy_begin_url
from finplat.db.prepared import STATEMENT_LIFETIME_SECONDS
from finplat.db.sqlite_inline import begin_immediate, inline_url
from finplat.sealing import engines as sealing

SQLITE_BUSY_SECONDS: float = 10
"""How long a SQLite transaction waits for the database before its request is answered 503."""

POSTGRES_POOL_WAIT_SECONDS: float = 30
"""How long a PostgreSQL transaction waits for a pooled connection before the same."""


def _sqlite_file(url: URL) -> str | None:
    """The file of a SQLite database kept on disk; None for any other database."""
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return url.database
    return None


def ensure_sqlite_directory(database_url: str) -> None:
    """SQLite creates the database file but not its folder (./var/ on a fresh clone)."""
    file = _sqlite_file(make_url(database_url))
    if file is not None:
        Path(file).parent.mkdir(parents=True, exist_ok=True)


def create_engine(settings: Settings) -> AsyncEngine:
    """The database engine, with the keyring its sealed columns are read and written with."""
    engine = _create_engine(settings)
    sealing.register(engine, settings.secret_keyring())
    return engine


def _create_engine(settings: Settings) -> AsyncEngine:
    url = make_url(settings.database_url)
    # hide_parameters keeps personal data (emails, phones) out of SQL error messages and logs.
    # No pre-ping: it cost three round trips per checkout (BEGIN, a ping, ROLLBACK), on every
    # request. A connection the server dropped fails its one request instead (5xx, which the
    # client retries with its idempotency key), and SQLAlchemy then renews the whole pool.
    options: dict[str, Any] = {"hide_parameters": True, "pool_pre_ping": False}
    if url.get_backend_name() == "sqlite":
        ensure_sqlite_directory(settings.database_url)
        if _sqlite_file(url) is not None:
            # One connection: the process's transactions queue for it in the event loop, in
            # order, instead of for SQLite's write lock behind the busy handler's sleeps
            # (which took seconds at the tail and failed requests as "database is locked").
            # Every transaction takes the write lock anyway (BEGIN IMMEDIATE), so a second
            # connection could never write at the same time; another process's lock is
            # waited for in the loop too (`begin_immediate`).
            options.update(pool_size=1, max_overflow=0, pool_timeout=SQLITE_BUSY_SECONDS)
        engine = create_async_engine(inline_url(url), **options)
        _configure_sqlite(engine)
        return engine
    # The pool keeps every connection it opens, up to twice the setting. With half of them as
    # overflow, each overflow connection returned while the pool held its fill was closed,
    # and opened again at the next burst (a connection attempt, a login, its statements
    # prepared anew): a tenth of a read's CPU at 32 clients, and a server process forked each
    # time on PostgreSQL's side.
    options["pool_size"] = 2 * settings.database_pool_size
    options["max_overflow"] = 0
    options["pool_timeout"] = POSTGRES_POOL_WAIT_SECONDS
    # Plans of the prebuilt statements follow the tables' growth (see `finplat.db.prepared`).
    options["connect_args"] = {"max_cached_statement_lifetime": STATEMENT_LIFETIME_SECONDS}
    # Reads outside a transaction until a request's first write (`finplat.db.postgres_reads`).
    return create_async_engine(lazy_begin_url(url), **options)


def _configure_sqlite(engine: AsyncEngine) -> None:
    """Give SQLite real transactions.

    The sqlite3 driver otherwise begins transactions lazily and breaks SAVEPOINT. We take over
    BEGIN ourselves and use BEGIN IMMEDIATE: the embedded database then has one writer at a time
    from the first statement, so a read-then-write can never act on a stale read.
    """

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        # Waits for the write lock happen in the event loop (`begin_immediate`), never in
        # SQLite's busy handler, which would sleep on the loop's thread.
        cursor.execute("PRAGMA busy_timeout=0")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        begin_immediate(conn.connection.dbapi_connection, SQLITE_BUSY_SECONDS)


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
