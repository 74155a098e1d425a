"""The sandbox providers' shared table: the callbacks they have decided to send (their outbox),
delivered through the platform's inbound path by `finplat.providers.sandbox.delivery`."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxCallback(Base):
    """A callback a sandbox provider has decided to send (its own outbox)."""

    __tablename__ = "sandbox_callbacks"
    __table_args__ = (Index("ix_sandbox_callbacks_unsent", "sent_at", "due_at"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(16))
    event_id: Mapped[str] = mapped_column(String(128), unique=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    due_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # The delivery that claimed the callback, until when: parallel deliveries of one company's
    # backlog send each callback once instead of all of them each.
    lock_token: Mapped[str | None] = mapped_column(String(32), default=None)
    locked_until: Mapped[datetime | None] = mapped_column(default=None)
