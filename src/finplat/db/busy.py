"""Whether a database error means "busy, try again" rather than a fault of the request."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc


def database_busy(error: BaseException) -> bool:
    """The connection pool had no connection free in time (on SQLite, whose one connection
    the process's transactions queue for), or another process held SQLite's write lock past
    its busy timeout. Neither wrote anything: the transaction never began or was rolled back."""
    if isinstance(error, sa_exc.TimeoutError):
        return True
    return isinstance(error, sa_exc.OperationalError) and "database is locked" in str(error.orig)
