"""A payment request: a user asks to be paid an exact amount into one of their budgets.

It is issued at the banking provider, which is the authority on whether a payer paid it; the
platform mirrors the provider's decision (callback `payment_request.paid`) and posts the money
to the budget's ledger account.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class PaymentRequestStatus(StrEnum):
    PENDING = "PENDING"  # payable until `expires_at`
    PAID = "PAID"  # paid in full; the money is in the budget
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"  # its expiry passed unpaid


class PaymentRequest(CompanyOwned, Timestamped, Base):
    __tablename__ = "payment_requests"
    __table_args__ = (
        Index("ix_payment_requests_company_user", "company_id", "user_id", "created_at"),
        Index("ix_payment_requests_status_expiry", "status", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # prq_ + 24 hex
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    budget_id: Mapped[str] = mapped_column(String(32))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    description: Mapped[str | None] = mapped_column(String(140), default=None)
    status: Mapped[str] = mapped_column(String(16))
    expires_at: Mapped[datetime]
    provider: Mapped[str] = mapped_column(String(16))
    provider_request_id: Mapped[str] = mapped_column(String(64), unique=True)
    provider_payment_id: Mapped[str | None] = mapped_column(String(64), default=None)
    payer_name: Mapped[str | None] = mapped_column(String(140), default=None)
    # The INCOMING_PAYMENT transaction that credited the budget.
    transaction_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    paid_at: Mapped[datetime | None] = mapped_column(default=None)
    cancelled_at: Mapped[datetime | None] = mapped_column(default=None)
    expired_at: Mapped[datetime | None] = mapped_column(default=None)
