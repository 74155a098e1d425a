"""A partner-hosted company's configuration and the outbox of what finplat tells the partner."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped
from finplat.kit.clock import utcnow
from finplat.sealing.column import SealedString

API_KEY_PURPOSE = "partner_hosted.api_key"


class PartnerHostedConfig(CompanyOwned, Timestamped, Base):
    """`PartnerHosted` of the company's configuration: where the partner answers and with
    which key finplat authenticates to it (sealed like webhook secrets)."""

    __tablename__ = "partner_hosted_configs"
    __table_args__ = (UniqueConstraint("company_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    base_url: Mapped[str] = mapped_column(String(2048))
    api_key: Mapped[str] = mapped_column(SealedString(1024, purpose=API_KEY_PURPOSE))
    # The last four characters, to tell keys apart (the key itself is never shown again).
    api_key_last4: Mapped[str] = mapped_column(String(4))
    timeout_ms: Mapped[int] = mapped_column(Integer)
    fallback_decision: Mapped[str] = mapped_column(String(8))


class PartnerDelivery(CompanyOwned, Base):
    """One notification to the partner (a reversal, clearing, refund or adjustment), sent
    until the partner acknowledges it. Its id is the `IdempotencyId` of every attempt, so the
    partner applies it once; `source` (the purchase event it reports) makes it exist once."""

    __tablename__ = "partner_deliveries"
    __table_args__ = (
        UniqueConstraint("company_id", "source"),
        Index("ix_partner_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source: Mapped[str] = mapped_column(String(120))
    operation: Mapped[str] = mapped_column(String(16))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    lock_token: Mapped[str | None] = mapped_column(String(32), default=None)
    locked_until: Mapped[datetime | None] = mapped_column(default=None)
    last_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(String(300), default=None)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
