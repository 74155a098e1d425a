"""The sandbox banking provider's payees (as an outside system would keep them, with the full
account details)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovPayee(Base):
    __tablename__ = "sandbox_bankprov_payees"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    payee_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    payment_type: Mapped[str] = mapped_column(String(16))
    payment_method: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str] = mapped_column(String(8))
    iban: Mapped[str | None] = mapped_column(String(34), default=None)
    account_number: Mapped[str | None] = mapped_column(String(34), default=None)
    sort_code: Mapped[str | None] = mapped_column(String(6), default=None)
    account_number_last4: Mapped[str] = mapped_column(String(4))
    bic: Mapped[str | None] = mapped_column(String(11), default=None)
    bank_name: Mapped[str | None] = mapped_column(String(100), default=None)
    bank_country: Mapped[str | None] = mapped_column(String(2), default=None)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(default=None)
