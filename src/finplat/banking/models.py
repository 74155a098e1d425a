"""A user's budgets at the banking provider and their per-currency balances, as the platform
knows them. Ids are the platform's own (`bud_...`, `bal_...`): callers pass back exactly what
the service returned and never see or build a provider id."""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class BankingBudget(CompanyOwned, Timestamped, Base):
    __tablename__ = "banking_budgets"
    __table_args__ = (UniqueConstraint("provider", "provider_budget_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[str] = mapped_column(String(64), index=True)  # the provider account
    provider_budget_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(100))
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)


class BankingBalance(CompanyOwned, Timestamped, Base):
    """One currency of a budget, with the ledger account that mirrors it."""

    __tablename__ = "banking_balances"
    __table_args__ = (UniqueConstraint("budget_id", "currency"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    budget_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("banking_budgets.id", ondelete="CASCADE")
    )
    currency: Mapped[str] = mapped_column(String(8))
    ledger_account_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("ledger_accounts.id", ondelete="RESTRICT")
    )
