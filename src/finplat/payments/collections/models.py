"""A collection against a mandate: the company takes an amount from the mandate's budget into
its master account. Its money and status live in its `MANDATE_COLLECTION` transaction (so
reconciliation and the transactions API cover it); this row ties it to its mandate, the
period whose allowance it uses and the caller's `merchantReferenceId`.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class PaymentCollection(CompanyOwned, Timestamped, Base):
    __tablename__ = "payment_collections"
    __table_args__ = (UniqueConstraint("company_id", "merchant_reference_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # col_ + 24 hex
    mandate_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("payment_mandates.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    merchant_reference_id: Mapped[str] = mapped_column(String(64))
    period: Mapped[str] = mapped_column(String(16))
    transaction_id: Mapped[int] = mapped_column(BigInteger, unique=True)
