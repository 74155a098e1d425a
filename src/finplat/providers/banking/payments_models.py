"""The sandbox banking provider's payments state: payment batches (with their FX order when
the payments need a conversion) and the payments in them, as an outside system keeps them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow

# Payment ids are positive integers (the provider's numeric ids): the row id plus this offset.
PAYMENT_ID_OFFSET = 100000


class SandboxBankprovPaymentBatch(Base):
    """A batch of payments the provider executes together (one payment per batch here)."""

    __tablename__ = "sandbox_bankprov_payment_batches"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    batch_id: Mapped[str] = mapped_column(String(64), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # PENDING, PROCESSING, COMPLETED, CANCELLED
    # The FX order converting the debit currency when the payments need it.
    order_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # OPEN until the batch executes (FILLED) or the order is cancelled (CANCELLED).
    order_status: Mapped[str | None] = mapped_column(String(16), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovPayment(Base):
    """One payout to a payee. The budget was debited `debit_amount_minor + fee_minor` of
    `debit_currency` when the payment was accepted, and is refunded if it fails."""

    __tablename__ = "sandbox_bankprov_payments"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    batch_id: Mapped[str] = mapped_column(String(64), index=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    payee_id: Mapped[str] = mapped_column(String(64))
    payment_method: Mapped[str] = mapped_column(String(32))
    beneficiary_name: Mapped[str] = mapped_column(String(200))
    beneficiary_account_last4: Mapped[str] = mapped_column(String(4))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    debit_amount_minor: Mapped[int] = mapped_column(BigInteger)
    debit_currency: Mapped[str] = mapped_column(String(8))
    fee_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str | None] = mapped_column(String(140), default=None)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    confirmation_reference: Mapped[str | None] = mapped_column(String(64), default=None)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def payment_id(self) -> str:
        return str(self.id + PAYMENT_ID_OFFSET)
