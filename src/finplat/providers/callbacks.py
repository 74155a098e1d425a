"""Provider callbacks: the platform's log of those received (the sandbox's queue of those it
has yet to send is `finplat.providers.sandbox.models.SandboxCallback`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class ProviderCallback(Base):
    """One callback received from a provider. The unique (provider, event id) makes processing
    exactly-once: a repeated delivery finds its row and changes nothing."""

    __tablename__ = "provider_callbacks"
    __table_args__ = (UniqueConstraint("provider", "event_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(16))
    event_id: Mapped[str] = mapped_column(String(128))
    company_id: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    processed_at: Mapped[datetime | None] = mapped_column(default=None)
    # Times the same event arrived again after it was processed.
    duplicates: Mapped[int] = mapped_column(Integer, default=0)
