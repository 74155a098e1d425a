"""PostgreSQL through asyncpg, with a transaction begun at the first statement that needs one.

SQLAlchemy's asyncpg driver sends `BEGIN` before a connection's first statement of any kind,
and `COMMIT` at the end: a request that only reads (`GET /users/{id}`: the key check and the
user) paid two round trips and a fifth of its CPU for a transaction that gives it nothing. At
READ COMMITTED, the isolation every finplat transaction runs at, each statement reads its own
snapshot whether or not a transaction is open, so a plain `SELECT` in autocommit reads exactly
what it would have read inside one.

This driver runs such a `SELECT` in autocommit while no transaction is open, and begins the
transaction before the first statement that is anything else: a write, a row lock
(`FOR UPDATE`/`FOR SHARE`), a savepoint, a `WITH` (which may write), a server-side cursor,
or a call that changes state (sequences, advisory locks, settings). From there on every
statement runs inside it, so a request's reads after its first write see that write, and its
row locks last until its commit. A commit or rollback with no transaction begun has nothing to
do, as before.

The configured URL (`postgresql+asyncpg://`) is served by this driver (`lazy_begin_url`).
"""

from __future__ import annotations

import re
from typing import Any, cast

from sqlalchemy.dialects import registry
from sqlalchemy.dialects.postgresql.asyncpg import (
    AsyncAdapt_asyncpg_connection,
    AsyncAdapt_asyncpg_cursor,
    AsyncAdapt_asyncpg_dbapi,
    AsyncAdapt_asyncpg_ss_cursor,
    PGDialect_asyncpg,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import DBAPIModule
from sqlalchemy.util.concurrency import await_

DRIVER = "finplat_asyncpg"

_PLAIN_SELECT = re.compile(r"\s*SELECT\b", re.IGNORECASE)
# What makes a SELECT more than a read: a row lock, which must last until the commit; or a
# function with an effect outside the statement's own snapshot.
_MORE_THAN_A_READ = re.compile(
    r"\bFOR\s+(?:NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)\b"
    r"|\b(?:nextval|setval|pg_advisory\w*|pg_try_advisory\w*|set_config|pg_notify"
    r"|txid_current|pg_current_xact_id|lo_\w+|dblink\w*)\s*\(",
    re.IGNORECASE,
)
_KNOWN_LIMIT = 4096
_reads_only: dict[str, bool] = {}


def reads_only(operation: str) -> bool:
    """Whether a statement is a plain `SELECT` that neither locks rows nor changes state, and
    so reads the same in autocommit as inside a READ COMMITTED transaction."""
    known = _reads_only.get(operation)
    if known is None:
        known = bool(_PLAIN_SELECT.match(operation)) and not _MORE_THAN_A_READ.search(operation)
        if len(_reads_only) >= _KNOWN_LIMIT:  # statements are built once each; a bound
            _reads_only.clear()  # keeps a stream of one-off texts from growing it
        _reads_only[operation] = known
    return known


class LazyBeginCursor(AsyncAdapt_asyncpg_cursor):
    """Begins the connection's transaction before any statement but a plain read."""

    __slots__ = ()

    async def _prepare_and_execute(self, operation: Any, parameters: Any) -> None:
        if not reads_only(operation):
            await cast(LazyBeginConnection, self._adapt_connection).begin_transaction()
        await super()._prepare_and_execute(operation, parameters)

    async def _executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        await cast(LazyBeginConnection, self._adapt_connection).begin_transaction()
        return await super()._executemany(operation, seq_of_parameters)


class LazyBeginServerSideCursor(AsyncAdapt_asyncpg_ss_cursor):
    """PostgreSQL keeps a server-side cursor only inside a transaction."""

    __slots__ = ()

    async def _prepare_and_execute(self, operation: Any, parameters: Any) -> None:
        await cast(LazyBeginConnection, self._adapt_connection).begin_transaction()
        await super()._prepare_and_execute(operation, parameters)


class LazyBeginConnection(AsyncAdapt_asyncpg_connection):
    """An asyncpg connection whose transaction is begun by `begin_transaction` only."""

    __slots__ = ()

    _cursor_cls = LazyBeginCursor
    _ss_cursor_cls = LazyBeginServerSideCursor

    async def _start_transaction(self) -> None:
        """Where SQLAlchemy's driver begins before any statement: a read needs no transaction,
        and every other statement has begun one already (the cursors above)."""

    async def begin_transaction(self) -> None:
        """Begin the transaction unless one is open (or the connection is in autocommit)."""
        if self._transaction is not None or self.isolation_level == "autocommit":
            return
        async with self._execute_mutex:
            if self._transaction is None:
                await AsyncAdapt_asyncpg_connection._start_transaction(self)


class LazyBeginDBAPI(AsyncAdapt_asyncpg_dbapi):
    def connect(self, *arg: Any, **kw: Any) -> LazyBeginConnection:
        creator_fn = kw.pop("async_creator_fn", self.asyncpg.connect)
        cache_size = kw.pop("prepared_statement_cache_size", 100)
        name_func = kw.pop("prepared_statement_name_func", None)
        connection: LazyBeginConnection = await_(
            LazyBeginConnection.create(
                self,
                creator_fn(*arg, **kw),
                prepared_statement_cache_size=cache_size,
                prepared_statement_name_func=name_func,
            )
        )
        return connection


class LazyBeginDialect(PGDialect_asyncpg):
    driver = DRIVER
    supports_statement_cache = True

    @classmethod
    def import_dbapi(cls) -> DBAPIModule:
        import asyncpg

        return cast(DBAPIModule, LazyBeginDBAPI(asyncpg))


registry.register(f"postgresql.{DRIVER}", __name__, "LazyBeginDialect")


def lazy_begin_url(url: URL | str) -> URL:
    """`postgresql+asyncpg://…` (the configured spelling) served by this driver."""
    parsed = make_url(url)
    if parsed.drivername == "postgresql+asyncpg":
        return parsed.set(drivername=f"postgresql+{DRIVER}")
    return parsed
