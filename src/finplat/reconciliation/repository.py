"""SQL of reconciliation (system scope for the company lists; company scope otherwise)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBalance, BankingBudget


async def companies_with_budget_balances(session: AsyncSession) -> list[int]:
    stmt = select(BankingBalance.company_id).distinct().order_by(BankingBalance.company_id)
    return [int(i) for i in (await session.execute(stmt)).scalars()]


async def budget_balances(
    session: AsyncSession, *, company_id: int
) -> list[tuple[BankingBalance, BankingBudget]]:
    """Every budget balance of the company with its budget, by provider account and budget."""
    stmt = (
        select(BankingBalance, BankingBudget)
        .join(BankingBudget, BankingBudget.id == BankingBalance.budget_id)
        .where(
            BankingBalance.company_id == company_id,
            BankingBudget.company_id == company_id,
        )
        .order_by(BankingBudget.account_id, BankingBudget.id, BankingBalance.currency)
    )
    return [(balance, budget) for balance, budget in (await session.execute(stmt)).all()]
