from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, Timestamped
from finplat.sealing.column import SealedString

WEBHOOK_SECRET_PURPOSE = "companies.webhook_secret"  # noqa: S105 - a column name


class Company(Timestamped, Base):
    __tablename__ = "companies"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    is_mor: Mapped[bool] = mapped_column(Boolean, default=False)
    webhook_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    # Kept retrievable (not hashed), since outbound webhooks are signed with it, but sealed.
    webhook_secret: Mapped[str] = mapped_column(SealedString(255, purpose=WEBHOOK_SECRET_PURPOSE))
    # Set when the endpoint answered 410 Gone; cleared when a URL is configured again.
    webhook_disabled_at: Mapped[datetime | None] = mapped_column(default=None)
    # The card provider new users are provisioned with after identity verification.
    default_card_provider: Mapped[str] = mapped_column(
        String(16), default="cardprov", server_default="cardprov"
    )
    # The MOR company that provisioned this one (`POST /api/v2/mor/public/children`); a child
    # is a tenant of its own, and provisions no children itself (one level).
    parent_company_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("companies.id", ondelete="RESTRICT"), default=None, index=True
    )
