"""FX quotes the platform handed out (`qt_...`), with the provider's quote behind each.

A quote is executed at most once: execution moves it from `OPEN` to `EXECUTED` with one
conditional UPDATE, so two parallel executions cannot both pass.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class QuoteStatus(StrEnum):
    OPEN = "OPEN"
    EXECUTED = "EXECUTED"


class BankingFxQuote(CompanyOwned, Timestamped, Base):
    __tablename__ = "banking_fx_quotes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    account_id: Mapped[str] = mapped_column(String(64))  # the provider account (`AccountId`)
    budget_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("banking_budgets.id", ondelete="CASCADE")
    )
    provider: Mapped[str] = mapped_column(String(16))
    provider_quote_id: Mapped[str] = mapped_column(String(64))
    sell_currency: Mapped[str] = mapped_column(String(8))
    buy_currency: Mapped[str] = mapped_column(String(8))
    sell_amount_minor: Mapped[int] = mapped_column(BigInteger)
    buy_amount_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))  # exact decimal digits
    fixed_side: Mapped[str] = mapped_column(String(8))
    expires_at: Mapped[datetime] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default=QuoteStatus.OPEN.value)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)
    # The FX_TRADE transaction of the execution that claimed the quote.
    transaction_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
