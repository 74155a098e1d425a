"""Money movements of users, as the API reports them (`/api/v2/transactions`).

The ledger holds the money; a transaction row is the business record around it: who, what,
which provider reference, and the status the provider last reported.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class Transaction(CompanyOwned, Timestamped, Base):
    __tablename__ = "transactions"
    __table_args__ = (
        Index("ix_transactions_company_user", "company_id", "user_id", "id"),
        UniqueConstraint("company_id", "provider", "provider_key"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    type: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    provider: Mapped[str] = mapped_column(String(16))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    fee_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    fee_currency: Mapped[str | None] = mapped_column(String(8), default=None)
    budget_id: Mapped[str | None] = mapped_column(String(32), default=None)
    # The provider's id for the operation, once known.
    provider_reference: Mapped[str | None] = mapped_column(String(64), default=None, index=True)
    # The idempotency key the provider was given: finds the operation after a lost answer.
    provider_key: Mapped[str | None] = mapped_column(String(64), default=None)
    # The ledger reservation held while the provider decides.
    ledger_pending_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    related_card_transaction_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    status_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    details: Mapped[str] = mapped_column(Text, default="{}")  # JSON: the `Metadata` field
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
