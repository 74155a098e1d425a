from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBalance, BankingBudget
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository, of_company
from finplat.kit.clock import utcnow


class BudgetRepository(CompanyRepository[BankingBudget]):
    model = BankingBudget

    async def find(self, budget_id: str) -> BankingBudget | None:
        found = await self.session.execute(_BUDGET, self.bound(budget_id=budget_id))
        return found.scalar_one_or_none()

    async def find_each(self, budget_ids: Sequence[str]) -> dict[str, BankingBudget]:
        """The company's budgets among `budget_ids`, by id, in one statement."""
        found = await self.session.execute(_BUDGETS_IN, self.bound(budget_ids=list(budget_ids)))
        return {budget.id: budget for budget in found.scalars()}

    async def by_provider_budget(
        self, provider: str, provider_budget_id: str
    ) -> BankingBudget | None:
        stmt = self.scoped().where(
            BankingBudget.provider == provider,
            BankingBudget.provider_budget_id == provider_budget_id,
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def of_user(self, user_id: int) -> Sequence[BankingBudget]:
        stmt = (
            self.scoped()
            .where(BankingBudget.user_id == user_id)
            .order_by(BankingBudget.created_at, BankingBudget.id)
        )
        return (await self.session.execute(stmt)).scalars().all()

    async def insert_if_absent(
        self,
        *,
        budget_id: str,
        user_id: int,
        provider: str,
        account_id: str,
        provider_budget_id: str,
        name: str,
        is_default: bool,
    ) -> None:
        now = utcnow()
        await self.session.execute(
            insert_ignoring_conflicts(self.session, BankingBudget).values(
                id=budget_id,
                company_id=self.company_id,
                user_id=user_id,
                provider=provider,
                account_id=account_id,
                provider_budget_id=provider_budget_id,
                name=name,
                is_default=is_default,
                created_at=now,
                updated_at=now,
            )
        )


class BalanceRepository(CompanyRepository[BankingBalance]):
    model = BankingBalance

    async def find(self, balance_id: str) -> BankingBalance | None:
        stmt = self.scoped().where(BankingBalance.id == balance_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def of_budget(self, budget_id: str, currency: str) -> BankingBalance | None:
        params = self.bound(budget_id=budget_id, currency=currency)
        return (await self.session.execute(_BALANCE_OF_BUDGET, params)).scalar_one_or_none()

    async def of_each_budget(
        self, budget_ids: Sequence[str], currency: str
    ) -> dict[str, BankingBalance]:
        """The balances in `currency` of the company's budgets among `budget_ids`, by budget,
        in one statement."""
        params = self.bound(budget_ids=list(budget_ids), currency=currency)
        found = await self.session.execute(_BALANCES_OF_BUDGETS_IN, params)
        return {balance.budget_id: balance for balance in found.scalars()}

    async def of_budgets(self, budget_ids: Sequence[str]) -> Sequence[BankingBalance]:
        stmt = (
            self.scoped()
            .where(BankingBalance.budget_id.in_(list(budget_ids)))
            .order_by(BankingBalance.budget_id, BankingBalance.currency)
        )
        return (await self.session.execute(stmt)).scalars().all()

    async def of_user(self, user_id: int) -> Sequence[BankingBalance]:
        found = await self.session.execute(_OF_USER, self.bound(user_id=user_id))
        return found.scalars().all()

    async def every(self) -> Sequence[BankingBalance]:
        stmt = self.scoped().order_by(BankingBalance.budget_id, BankingBalance.currency)
        return (await self.session.execute(stmt)).scalars().all()

    async def insert_if_absent(
        self,
        *,
        balance_id: str,
        user_id: int,
        budget_id: str,
        currency: str,
        ledger_account_id: int,
    ) -> None:
        now = utcnow()
        await self.session.execute(
            insert_ignoring_conflicts(self.session, BankingBalance).values(
                id=balance_id,
                company_id=self.company_id,
                user_id=user_id,
                budget_id=budget_id,
                currency=currency,
                ledger_account_id=ledger_account_id,
                created_at=now,
                updated_at=now,
            )
        )


# Every banking money operation reads its budget and its balance: built once, as are a budget
# transfer's reads of its two budgets, then of their two balances.
_BUDGET = of_company(BankingBudget, BankingBudget.id == bindparam("budget_id"))
_BALANCE_OF_BUDGET = of_company(
    BankingBalance,
    BankingBalance.budget_id == bindparam("budget_id"),
    BankingBalance.currency == bindparam("currency"),
)
_BUDGETS_IN = of_company(
    BankingBudget, BankingBudget.id.in_(bindparam("budget_ids", expanding=True))
)
_BALANCES_OF_BUDGETS_IN = of_company(
    BankingBalance,
    BankingBalance.budget_id.in_(bindparam("budget_ids", expanding=True)),
    BankingBalance.currency == bindparam("currency"),
)
# A user's balances are read by every balance listing and total: built once.
_OF_USER = of_company(BankingBalance, BankingBalance.user_id == bindparam("user_id")).order_by(
    BankingBalance.budget_id, BankingBalance.currency
)


async def budgets_of_company(session: AsyncSession, company_id: int) -> Sequence[BankingBudget]:
    repo = BudgetRepository(session, company_id)
    return (await session.execute(repo.scoped().order_by(BankingBudget.id))).scalars().all()
