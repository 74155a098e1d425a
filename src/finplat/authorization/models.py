"""Authorization rules. (A company's BIN ranges are derived from its card products: no table.)"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class AuthorizationRule(CompanyOwned, Timestamped, Base):
    __tablename__ = "authorization_rules"
    __table_args__ = (Index("ix_authorization_rules_company_priority", "company_id", "priority"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    name: Mapped[str | None] = mapped_column(String(100), default=None)
    description: Mapped[str | None] = mapped_column(String(500), default=None)
    scope_type: Mapped[str] = mapped_column(String(16))  # COMPANY | USER | CARD
    user_id: Mapped[int | None] = mapped_column(BigIntId, default=None)
    card_id: Mapped[int | None] = mapped_column(BigIntId, default=None)
    bin_range_id: Mapped[int | None] = mapped_column(BigIntId, default=None)
    rule_type: Mapped[str] = mapped_column(String(24))
    configuration: Mapped[str] = mapped_column(Text)  # JSON, canonical wire names
    response_code: Mapped[str | None] = mapped_column(String(4), default=None)
    priority: Mapped[int] = mapped_column(Integer, default=100)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    shadow: Mapped[bool] = mapped_column(Boolean, default=False)
    effective_from: Mapped[datetime | None] = mapped_column(default=None)
    effective_to: Mapped[datetime | None] = mapped_column(default=None)
