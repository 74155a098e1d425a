"""Authorization rules and the company's BIN ranges."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class BinRange(CompanyOwned, Base):
    """One issuing BIN the company's card products use (one per card programme provider),
    numbered for the company the first time it is listed or used."""

    __tablename__ = "authorization_bin_ranges"
    __table_args__ = (UniqueConstraint("company_id", "provider"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(16))
    bin: Mapped[str] = mapped_column(String(8))


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
