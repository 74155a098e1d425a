"""Card money: fee schedules per tier, top-ups / unloads / fee collections, auto top-up rules."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class CardFeeSchedule(CompanyOwned, Timestamped, Base):
    """A tier's card fees; a tier without a row uses `fees.DEFAULT_SCHEDULE`."""

    __tablename__ = "card_fee_schedules"
    __table_args__ = (UniqueConstraint("company_id", "tier_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    tier_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("tiers.id", ondelete="CASCADE"))
    # Percentages as exact decimal text ("1.25" = 1.25 %).
    topup_fee_percent: Mapped[str] = mapped_column(String(16))
    topup_fixed_fee_minor: Mapped[int] = mapped_column(BigInteger)
    unload_fee_percent: Mapped[str] = mapped_column(String(16))
    unload_fixed_fee_minor: Mapped[int] = mapped_column(BigInteger)
    decline_fee_minor: Mapped[int] = mapped_column(BigInteger)


class CardFunding(CompanyOwned, Timestamped, Base):
    """One money movement onto or off a card: a top-up (`OrderId`), an unload
    (`TransactionId`), an automatic top-up or a decline-fee collection.

    Completing one changes no indexed column and its page keeps room (fillfactor), so the row
    is updated in place. The company leads both indexes, so it needs none of its own."""

    __tablename__ = "card_fundings"
    __table_args__ = (
        UniqueConstraint("company_id", "provider_key"),
        Index("ix_card_fundings_card", "company_id", "card_id", "kind", "created_at"),
        {"postgresql_with": {"fillfactor": 70}},
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("companies.id", ondelete="CASCADE"), nullable=False
    )
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # TOPUP | UNLOAD | AUTO_TOPUP | DECLINE_FEE
    status: Mapped[str] = mapped_column(String(16))  # PENDING | COMPLETED | FAILED
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # what the caller asked to move
    fee_minor: Mapped[int] = mapped_column(BigInteger)
    # Decline fees the top-up paid before loading the rest.
    fee_paid_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    provider_key: Mapped[str] = mapped_column(String(64))
    provider_movement_id: Mapped[str | None] = mapped_column(String(64), default=None)
    ledger_pending_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    trigger: Mapped[str | None] = mapped_column(
        String(16), default=None
    )  # auto top-up rule | CANCELLATION
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    # While set and in the future, one caller is asking the provider to make this movement and
    # no other may (`funding._move`): a refusal it records must never be followed by another
    # call under the same provider key, which the provider could accept.
    provider_call_until: Mapped[datetime | None] = mapped_column(default=None)


class CardAutoTopup(CompanyOwned, Timestamped, Base):
    """One auto top-up rule of a card (`LOW_BALANCE`, `FAILED_TX` or `DEPOSIT`)."""

    __tablename__ = "card_auto_topups"
    __table_args__ = (UniqueConstraint("company_id", "card_id", "rule"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(16))
    enabled: Mapped[bool] = mapped_column(Boolean)
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # the top-up's Value, card currency
    threshold_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    monthly_limit_minor: Mapped[int] = mapped_column(BigInteger)
    deposit_currency: Mapped[str | None] = mapped_column(String(8), default=None)
