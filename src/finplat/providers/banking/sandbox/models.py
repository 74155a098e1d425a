"""The sandbox banking provider's core-banking state: budgets, balances and the movements
that changed them (as an outside system would keep it)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovBudget(Base):
    __tablename__ = "sandbox_bankprov_budgets"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    budget_id: Mapped[str] = mapped_column(String(64), unique=True)
    # Set for budgets opened on request; the default budget is keyed by its account.
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovBalance(Base):
    """What the provider holds for a budget in one currency. Never negative."""

    __tablename__ = "sandbox_bankprov_balances"
    __table_args__ = (
        UniqueConstraint("budget_id", "currency"),
        CheckConstraint("amount_minor >= 0", name="not_negative"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    budget_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger, default=0)


class SandboxBankprovMovement(Base):
    """One change of a provider balance (its statement line)."""

    __tablename__ = "sandbox_bankprov_movements"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    budget_id: Mapped[str] = mapped_column(String(64), index=True)
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # signed: negative leaves the budget
    kind: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
