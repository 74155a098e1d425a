"""The sandbox banking provider's FX state: the quotes it gave and the trades it executed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovFxQuote(Base):
    __tablename__ = "sandbox_bankprov_fx_quotes"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    quote_id: Mapped[str] = mapped_column(String(64), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    sell_currency: Mapped[str] = mapped_column(String(8))
    buy_currency: Mapped[str] = mapped_column(String(8))
    sell_amount_minor: Mapped[int] = mapped_column(BigInteger)
    buy_amount_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))  # exact decimal digits
    fixed_side: Mapped[str] = mapped_column(String(8))
    expires_at: Mapped[datetime] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovFxTrade(Base):
    """One execution of a quote: a quote is executed at most once (unique `quote_id`), and
    a key names at most one trade (unique `idempotency_key`)."""

    __tablename__ = "sandbox_bankprov_fx_trades"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    trade_id: Mapped[str] = mapped_column(String(64), unique=True)
    quote_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)
