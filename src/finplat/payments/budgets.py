"""The user's budget a payment request or a mandate concerns."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts, budgets
from finplat.banking.models import BankingBudget
from finplat.banking.repository import BudgetRepository
from finplat.errors import Conflict
from finplat.providers.registry import Providers, configured

NO_BANKING = "No banking provider is configured."


class DefaultBudgetMissing(Conflict):
    code = "DEFAULT_BUDGET_NOT_FOUND"
    message = "The user has no default budget yet: name the `BudgetId`."


async def user_budget(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    budget_id: str | None,
) -> BankingBudget:
    """`budget_id`, which must be the user's, or the user's default budget (learnt from the
    provider when not yet known)."""
    if budget_id is not None:
        return await accounts.user_budget(
            session, company_id=company_id, user_id=user_id, budget_id=budget_id
        )
    account = await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    repo = BudgetRepository(session, company_id)
    found = [b for b in await repo.of_user(user_id) if b.is_default]
    if not found:
        banking = configured(providers.banking, NO_BANKING)
        await budgets.sync(
            session, banking, providers.policy, company_id=company_id, account=account
        )
        found = [b for b in await repo.of_user(user_id) if b.is_default]
    if not found:
        raise DefaultBudgetMissing()
    return found[0]
