"""The session of the request being served, for checks that must see it from afar.

A provider is never called while the request's transaction is open (docs/decisions.md,
"Provider framework"): on PostgreSQL that would hold a connection and any row locks across a network
call, and on SQLite, whose transactions take the write lock from their first statement, the
sandbox provider's own session would wait for that lock until the call timed out. The sandbox
providers check it on every operation (`finplat.providers.simulator`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sqlalchemy.ext.asyncio import AsyncSession

_current: ContextVar[AsyncSession | None] = ContextVar("request_session", default=None)


@contextmanager
def serving(session: AsyncSession) -> Iterator[None]:
    """Mark `session` as the request's own for the duration of the block."""
    token = _current.set(session)
    try:
        yield
    finally:
        _current.reset(token)


def holds_transaction() -> bool:
    """Whether the request being served (if any) has a transaction open right now."""
    session = _current.get()
    return session is not None and session.in_transaction()
