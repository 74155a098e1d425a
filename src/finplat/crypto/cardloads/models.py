"""Crypto card loads (`ccl_...`): stablecoins of the user's crypto balance sent on a chain to
the card provider, crediting the card once final.

`PENDING` (reserved in the ledger, on chain) -> `CONFIRMED` (final on chain: the coins are
settled and the card's top-up is due) -> `COMPLETED` (the card is credited, `funding_id`);
`FAILED` from `PENDING` (the chain transfer failed: the reservation is released) or from
`CONFIRMED` (the card refused the credit: the coins are back in the crypto balance)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class CardLoadStatus(StrEnum):
    PENDING = "PENDING"
    CONFIRMED = "CONFIRMED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class CryptoCardLoad(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_card_loads"
    __table_args__ = (UniqueConstraint("company_id", "provider_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    currency: Mapped[str] = mapped_column(String(8))  # the stablecoin sent
    chain_id: Mapped[int] = mapped_column(Integer)
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # in `currency`
    load_minor: Mapped[int] = mapped_column(BigInteger)  # USD the card's top-up is for
    status: Mapped[str] = mapped_column(String(16), index=True)
    provider_key: Mapped[str] = mapped_column(String(128))
    provider_reference: Mapped[str | None] = mapped_column(String(64), default=None)
    ledger_pending_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    funding_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    confirmed_at: Mapped[datetime | None] = mapped_column(default=None)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
