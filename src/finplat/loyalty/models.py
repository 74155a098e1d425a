"""Loyalty: a company's programmes, the merchants whose purchases earn points under them (each
with its acquirer merchant ids, MIDs), the points awarded per card transaction or imported
past transaction, and the configurations past transactions are imported under."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class LoyaltyProgramStatus(StrEnum):
    ACTIVE = "ACTIVE"  # matched purchases earn points
    INACTIVE = "INACTIVE"  # nothing new is assigned to it; awards already made stay


class PointsRule(StrEnum):
    PER_CURRENCY_UNIT = "PER_CURRENCY_UNIT"  # `rate` points per whole unit paid
    PER_TRANSACTION = "PER_TRANSACTION"  # `rate` points per purchase paid


class AwardSource(StrEnum):
    MATCHED = "MATCHED"  # a card purchase at a merchant's MID
    ASSIGNED = "ASSIGNED"  # a card purchase assigned by the legacy auto-assign call
    IMPORTED = "IMPORTED"  # a past transaction from an imported file


class LoyaltyProgram(CompanyOwned, Timestamped, Base):
    __tablename__ = "loyalty_programs"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(16))
    points_rule: Mapped[str] = mapped_column(String(24))
    points_rate: Mapped[int] = mapped_column(Integer)


class LoyaltyMerchant(CompanyOwned, Timestamped, Base):
    __tablename__ = "loyalty_merchants"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    program_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("loyalty_programs.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    city: Mapped[str | None] = mapped_column(String(100), default=None)
    country: Mapped[str | None] = mapped_column(String(2), default=None)


class LoyaltyMid(CompanyOwned, Base):
    """One acquirer merchant id of a merchant: a company's MID belongs to one merchant."""

    __tablename__ = "loyalty_mids"
    __table_args__ = (UniqueConstraint("company_id", "mid"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    merchant_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("loyalty_merchants.id", ondelete="CASCADE"), index=True
    )
    mid: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column()


class LoyaltyImportConfig(CompanyOwned, Timestamped, Base):
    __tablename__ = "loyalty_import_configs"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    program_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("loyalty_programs.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    delimiter: Mapped[str] = mapped_column(String(1))


class LoyaltyAward(CompanyOwned, Timestamped, Base):
    """The points one transaction earned under one programme: at most one per card
    transaction, at most one per imported transaction id of a configuration. `points` is
    brought to what the paid amount earns at every event of the purchase, under the rule
    taken when the award was made (`points_rule`, `points_rate`)."""

    __tablename__ = "loyalty_awards"
    __table_args__ = (
        UniqueConstraint("company_id", "card_transaction_id"),
        UniqueConstraint("company_id", "import_config_id", "external_id"),
        Index("ix_loyalty_awards_company_occurred", "company_id", "occurred_at"),
        Index("ix_loyalty_awards_company_user", "company_id", "user_id", "program_id"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    program_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("loyalty_programs.id", ondelete="CASCADE")
    )
    merchant_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("loyalty_merchants.id", ondelete="SET NULL"), default=None
    )
    user_id: Mapped[int] = mapped_column(BigIntId)
    source: Mapped[str] = mapped_column(String(16))
    card_transaction_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("card_transactions.id", ondelete="CASCADE"), default=None
    )
    import_config_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("loyalty_import_configs.id", ondelete="CASCADE"), default=None
    )
    external_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # An imported row's content, to tell the same row sent again from a conflicting one.
    digest: Mapped[str | None] = mapped_column(String(64), default=None)
    mid: Mapped[str | None] = mapped_column(String(32), default=None)
    currency: Mapped[str] = mapped_column(String(8))
    paid_minor: Mapped[int] = mapped_column(BigInteger, default=0)  # cleared - refunded
    points_rule: Mapped[str] = mapped_column(String(24))
    points_rate: Mapped[int] = mapped_column(Integer)
    points: Mapped[int] = mapped_column(BigInteger, default=0)
    occurred_at: Mapped[datetime] = mapped_column()
