from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned
from finplat.kit.clock import utcnow


class Event(CompanyOwned, Base):
    """An outbox row, written in the same transaction as the change it reports.

    `body` is the envelope serialised once, at creation: every delivery attempt sends exactly
    these bytes, so signatures and receiver-side de-duplication stay stable.
    """

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_company_created", "company_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    type: Mapped[str] = mapped_column(String(100))
    domain: Mapped[str] = mapped_column(String(50))
    provider: Mapped[str] = mapped_column(String(50))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(CompanyOwned, Base):
    """Delivery of one event to the company's webhook endpoint; its id is the stable
    `X-Service-Webhook-Id` / `webhook-id` of every attempt."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_company_created", "company_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(40), ForeignKey("events.id"), index=True)
    status: Mapped[str] = mapped_column(String(20))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    lock_token: Mapped[str | None] = mapped_column(String(32), default=None)
    locked_until: Mapped[datetime | None] = mapped_column(default=None)
    last_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(String(300), default=None)
    last_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookAttempt(Base):
    """One HTTP attempt of a delivery (the delivery log)."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    delivery_id: Mapped[str] = mapped_column(
        String(40), ForeignKey("webhook_deliveries.id"), index=True
    )
    attempt: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    error: Mapped[str | None] = mapped_column(String(300), default=None)
    duration_ms: Mapped[int] = mapped_column(Integer)
    attempted_at: Mapped[datetime] = mapped_column(default=utcnow)
