"""The sandbox banking provider's transfers (budget to budget, budget to company master), as an
outside system would keep them: one row per idempotency key."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovTransfer(Base):
    __tablename__ = "sandbox_bankprov_transfers"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    transfer_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    from_budget_id: Mapped[str] = mapped_column(String(64))
    # The provider budget credited; for a transfer to the company master, its balance row.
    to_budget_id: Mapped[str] = mapped_column(String(64))
    to_master: Mapped[bool] = mapped_column(default=False)
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
