"""Discount codes a company defines, and the one code a card may carry."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class CardDiscountCode(CompanyOwned, Timestamped, Base):
    """A percentage off the top-up fee of the cards carrying it, within an optional window."""

    __tablename__ = "card_discount_codes"
    __table_args__ = (UniqueConstraint("company_id", "code"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(64))
    percent_off: Mapped[str] = mapped_column(String(16))  # a decimal, 0 < p <= 100
    valid_from: Mapped[datetime | None] = mapped_column(default=None)
    valid_until: Mapped[datetime | None] = mapped_column(default=None)


class CardDiscount(CompanyOwned, Timestamped, Base):
    """The discount code a card carries (at most one: a card has at most one row)."""

    __tablename__ = "card_discounts"

    card_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("cards.id", ondelete="CASCADE"), primary_key=True
    )
    discount_code_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("card_discount_codes.id", ondelete="CASCADE"), index=True
    )
