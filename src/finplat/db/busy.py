"""Whether a database error means "busy, try again" rather than a fault of the request."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc

# PostgreSQL refusing a new connection because it serves as many as it is configured for.
_TOO_MANY_CONNECTIONS = "53300"


def database_busy(error: BaseException) -> bool:
    """The connection pool had no connection free in time (on SQLite, whose one connection
    the process's transactions queue for), PostgreSQL had no room for another connection, or
    another process held SQLite's write lock past its busy timeout. None of them wrote
    anything: the transaction never began or was rolled back."""
    if isinstance(error, sa_exc.TimeoutError):
        return True
    if not isinstance(error, sa_exc.DBAPIError):
        return False
    if getattr(error.orig, "sqlstate", None) == _TOO_MANY_CONNECTIONS:
        return True
    return isinstance(error, sa_exc.OperationalError) and "database is locked" in str(error.orig)
