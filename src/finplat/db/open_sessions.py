"""The sessions a task has open, for checks that must see them from afar.

A provider is never called while a transaction is open (docs/decisions.md, "Provider
framework"): on PostgreSQL that would hold a connection and any row locks across a network call,
and on SQLite, whose transactions take the write lock from their first statement, the sandbox
provider's own session would wait for that lock until the call timed out. Every unit of work
(a request's, a background job's, a CLI command's) marks its session here, and the sandbox
providers check them on every operation (`finplat.providers.simulator`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sqlalchemy.ext.asyncio import AsyncSession

_open: ContextVar[tuple[AsyncSession, ...]] = ContextVar("open_sessions", default=())


@contextmanager
def opened(session: AsyncSession) -> Iterator[None]:
    """Mark `session` as open in this task (and the tasks it starts) for the block."""
    token = _open.set((*_open.get(), session))
    try:
        yield
    finally:
        _open.reset(token)


def holds_transaction() -> bool:
    """Whether a session open in this task has a transaction open right now."""
    return any(session.in_transaction() for session in _open.get())
