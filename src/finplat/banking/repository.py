from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, func, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBalance, BankingBudget
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.repository import COMPANY_PARAM, CompanyRepository, of_company
from finplat.kit.clock import utcnow
from finplat.ledger.models import LedgerBalance
from finplat.providers.names import BankProvider


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

    async def of_budget_in(
        self, budget_id: str, currencies: Sequence[str]
    ) -> dict[str, BankingBalance]:
        """The budget's balances in those of `currencies` it holds, by currency, in one
        statement."""
        params = self.bound(budget_id=budget_id, currencies=list(currencies))
        found = await self.session.execute(_BALANCES_OF_BUDGET_IN, params)
        return {balance.currency: balance for balance in found.scalars()}

    async def holdings_by_currency(self, user_id: int) -> list[tuple[str, str, int, int, int]]:
        """The ledger totals of everything the user holds, summed per currency and provider
        in one statement: `(currency, provider, posted, pending_debits, pending_credits)` for
        the budget balances (the banking provider's) and the cards that are not cancelled
        (their issuer's). A holding whose account has no balance row yet counts zero, its
        currency still shown."""
        rows = await self.session.execute(_HOLDINGS_BY_CURRENCY, self.bound(user_id=user_id))
        return [(row[0], row[1], int(row[2]), int(row[3]), int(row[4])) for row in rows]

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
_BALANCES_OF_BUDGET_IN = of_company(
    BankingBalance,
    BankingBalance.budget_id == bindparam("budget_id"),
    BankingBalance.currency.in_(bindparam("currencies", expanding=True)),
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


# The aggregated balance's one read: the user's holdings (budget balances, live cards) with
# their ledger accounts' shards, summed in the database rather than loaded as objects.
_HELD = union_all(
    select(
        BankingBalance.ledger_account_id.label("account_id"),
        BankingBalance.currency.label("currency"),
        literal(BankProvider.BANKPROV.value).label("provider"),
    ).where(
        BankingBalance.company_id == bindparam(COMPANY_PARAM),
        BankingBalance.user_id == bindparam("user_id"),
    ),
    select(Card.ledger_account_id, Card.currency, Card.provider).where(
        Card.company_id == bindparam(COMPANY_PARAM),
        Card.user_id == bindparam("user_id"),
        Card.status != CardStatus.CANCELLED.value,
        Card.ledger_account_id.is_not(None),
    ),
).subquery()
_HOLDINGS_BY_CURRENCY = (
    select(
        _HELD.c.currency,
        _HELD.c.provider,
        func.coalesce(func.sum(LedgerBalance.posted), 0),
        func.coalesce(func.sum(LedgerBalance.pending_debits), 0),
        func.coalesce(func.sum(LedgerBalance.pending_credits), 0),
    )
    .select_from(_HELD)
    .outerjoin(LedgerBalance, LedgerBalance.account_id == _HELD.c.account_id)
    .group_by(_HELD.c.currency, _HELD.c.provider)
    .order_by(_HELD.c.currency, _HELD.c.provider)
)
