from __future__ import annotations

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class Tier(CompanyOwned, Timestamped, Base):
    __tablename__ = "tiers"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(500))
    tier_level: Mapped[int] = mapped_column(Integer)
    account_type: Mapped[str] = mapped_column(String(16))
    fee_currency: Mapped[str] = mapped_column(String(8))
    monthly_fee_minor: Mapped[int] = mapped_column(Integer)
    yearly_fee_minor: Mapped[int] = mapped_column(Integer)
    features: Mapped[list[str]] = mapped_column(JSON)
    is_default: Mapped[bool] = mapped_column(Boolean)
    is_active: Mapped[bool] = mapped_column(Boolean)
    includes_bankprov_cards: Mapped[bool] = mapped_column(Boolean)
    includes_bankprov_iban: Mapped[bool] = mapped_column(Boolean)


class CardProduct(CompanyOwned, Timestamped, Base):
    """A card a tier offers; its id is the `CardTypeId` used when ordering."""

    __tablename__ = "card_products"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    tier_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("tiers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    card_type: Mapped[str] = mapped_column(String(16))
    provider: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(8))
