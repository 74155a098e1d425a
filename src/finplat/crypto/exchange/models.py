"""Exchange quotes (`cxq_...`): a stablecoin amount priced in a fiat currency for a short
time. A quote is accepted at most once: acceptance moves it from `OPEN` to `ACCEPTED` with one
conditional UPDATE, so parallel accepts cannot both pass."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class QuoteStatus(StrEnum):
    OPEN = "OPEN"
    ACCEPTED = "ACCEPTED"


class CryptoExchangeQuote(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_exchange_quotes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    budget_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("banking_budgets.id", ondelete="CASCADE")
    )
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # sold, fee included
    fee_minor: Mapped[int] = mapped_column(BigInteger)  # in `currency`
    fiat_currency: Mapped[str] = mapped_column(String(8))
    fiat_amount_minor: Mapped[int] = mapped_column(BigInteger)  # what the budget receives
    rate: Mapped[str] = mapped_column(String(32))
    expires_at: Mapped[datetime] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default=QuoteStatus.OPEN.value)
    accepted_at: Mapped[datetime | None] = mapped_column(default=None)
    transfer_id: Mapped[str | None] = mapped_column(String(32), default=None)
