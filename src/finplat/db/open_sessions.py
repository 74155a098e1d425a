"""The sessions a task has a transaction open in, for checks that must see them from afar.

A provider is never called while a transaction is open (docs/decisions.md, "Provider
framework"): on PostgreSQL that would hold a connection and any row locks across a network call,
and on SQLite, whose transactions take the write lock from their first statement, the sandbox
provider's own session would wait for that lock until the call timed out. Every session marks
itself here when its transaction begins (a `Session` event, so a session opened straight from a
session factory counts as one of a unit of work does), and the sandbox providers check them on
every operation (`finplat.providers.sandbox.simulator`).
"""

from __future__ import annotations

from contextvars import ContextVar

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

_open: ContextVar[tuple[Session, ...]] = ContextVar("open_sessions", default=())


@event.listens_for(Session, "after_transaction_create")
def _mark(session: Session, transaction: SessionTransaction) -> None:
    """Mark a session whose transaction begins, in this task and the tasks it starts.

    The mark is not taken off when the transaction ends: an `AsyncSession` closes in a task
    of its own, whose context is not this one. Sessions with no transaction open any more are
    dropped here instead, so a task that opens sessions all its life keeps only those."""
    if transaction.parent is not None:  # a savepoint, inside a transaction marked already
        return
    still_open = tuple(marked for marked in _open.get() if marked.in_transaction())
    _open.set((*still_open, session))


def holds_transaction() -> bool:
    """Whether a session marked in this task has a transaction open right now."""
    return any(session.in_transaction() for session in _open.get())
