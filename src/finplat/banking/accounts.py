"""Whose is it: resolving the identifiers callers pass back (`accountId`, `budgetId`,
`balanceId`) to the target user's own objects.

Rule (spec, "What the service does" 1 and 3): callers pass back exactly the identifiers the
service returned, and selected accounts and budgets must belong to the key's company (and,
where a user is named, to that user). Anything else — an unknown id, a provider id, another
company's or another user's — is refused; another company's id is indistinguishable from an
unknown one.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBalance, BankingBudget
from finplat.banking.repository import BalanceRepository, BudgetRepository
from finplat.errors import Conflict, NotFound
from finplat.providers.names import BankProvider
from finplat.provisioning import service as provisioning
from finplat.provisioning import statuses
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository
from finplat.users import service as users


class AccountNotFound(NotFound):
    code = "ACCOUNT_NOT_FOUND"
    message = "No banking account with that AccountId for this user."


class BudgetNotFound(NotFound):
    code = "BUDGET_NOT_FOUND"
    message = "No budget with that BudgetId for this user."


class BalanceNotFound(NotFound):
    code = "BALANCE_NOT_FOUND"
    message = "No balance with that BalanceId for this user."


class BankingNotActive(Conflict):
    code = "BANKING_ACCOUNT_NOT_ACTIVE"
    message = (
        "The user has no active banking-provider account: complete the banking-provider "
        "onboarding and wait for its approval."
    )


class CurrencyNotInBudget(Conflict):
    code = "CURRENCY_NOT_IN_BUDGET"
    message = "The budget does not hold that currency."


async def banking_account(
    session: AsyncSession, *, company_id: int, user_id: int
) -> ProviderAccount:
    """The user's active banking-provider account (404 for an unknown user, 409 when the
    banking provider has not opened the account)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    account = await provisioning.find(
        session, company_id=company_id, user_id=user_id, provider=BankProvider.BANKPROV
    )
    if (
        account is None
        or account.provider_account_id is None
        or account.status != statuses.APPROVED_BANKPROV
    ):
        raise BankingNotActive()
    return account


async def user_account(
    session: AsyncSession, *, company_id: int, user_id: int, account_id: str
) -> ProviderAccount:
    """`account_id` must be exactly the user's banking-provider `AccountId`."""
    account = await ProviderAccountRepository(session, company_id).by_provider_account(
        BankProvider.BANKPROV.value, account_id
    )
    if account is None or account.user_id != user_id:
        # The user is read only to tell an unknown user (404 `USER_NOT_FOUND` first) from an
        # account that is not theirs: the account of a user of the company names one.
        await users.get_user(session, company_id=company_id, user_id=user_id)
        raise AccountNotFound()
    if account.status != statuses.APPROVED_BANKPROV:
        raise BankingNotActive()
    return account


async def company_account(
    session: AsyncSession, *, company_id: int, account_id: str
) -> ProviderAccount:
    """`account_id` must be a banking-provider `AccountId` of one of the company's users."""
    account = await ProviderAccountRepository(session, company_id).by_provider_account(
        BankProvider.BANKPROV.value, account_id
    )
    if account is None:
        raise AccountNotFound("No banking account with that AccountId in this company.")
    if account.status != statuses.APPROVED_BANKPROV:
        raise BankingNotActive()
    return account


async def account_of(
    session: AsyncSession, *, company_id: int, user_id: int | None, account_id: str
) -> ProviderAccount:
    """The banking account `account_id` names, and with it the target user: with `user_id`,
    it must be that user's (404 `USER_NOT_FOUND` for an unknown user, 404
    `ACCOUNT_NOT_FOUND` for another user's account, as for one that does not exist); without
    it, any of the company's users' (the spec's order routes, quotations and payouts, where
    `userId` is optional)."""
    if user_id is not None:
        return await user_account(
            session, company_id=company_id, user_id=user_id, account_id=account_id
        )
    return await company_account(session, company_id=company_id, account_id=account_id)


async def holder_of(session: AsyncSession, *, company_id: int, account_id: str) -> int:
    """The user holding the banking account `account_id` (404 `ACCOUNT_NOT_FOUND` for an
    unknown account or another company's): the target user of an operation whose `userId` is
    optional. The account's status is checked where the operation uses it."""
    account = await ProviderAccountRepository(session, company_id).by_provider_account(
        BankProvider.BANKPROV.value, account_id
    )
    if account is None:
        raise AccountNotFound("No banking account with that AccountId in this company.")
    return account.user_id


async def find_budget(
    session: AsyncSession, *, company_id: int, budget_id: str
) -> BankingBudget | None:
    """A budget of the company, whoever owns it (for rules that tell other users' budgets
    apart, such as the cross-account transfer rule)."""
    return await BudgetRepository(session, company_id).find(budget_id)


async def find_budgets(
    session: AsyncSession, *, company_id: int, budget_ids: Sequence[str]
) -> dict[str, BankingBudget]:
    """`find_budget` of each of `budget_ids` in one statement: those the company has, by id."""
    return await BudgetRepository(session, company_id).find_each(budget_ids)


async def budget_balances(
    session: AsyncSession, *, company_id: int, budget_ids: Sequence[str], currency: str
) -> dict[str, BankingBalance]:
    """The balances in `currency` of each of `budget_ids` that holds it, by budget id, in one
    statement (a budget without one is absent: `budget_balance` names that 409)."""
    return await BalanceRepository(session, company_id).of_each_budget(budget_ids, currency)


async def user_budget(
    session: AsyncSession, *, company_id: int, user_id: int, budget_id: str
) -> BankingBudget:
    """The user's budget; 404 `USER_NOT_FOUND` for an unknown user, else
    `BUDGET_NOT_FOUND`."""
    budget = await find_budget(session, company_id=company_id, budget_id=budget_id)
    if budget is None or budget.user_id != user_id:
        await users.get_user(session, company_id=company_id, user_id=user_id)
        raise BudgetNotFound()
    return budget


async def budget_balance(
    session: AsyncSession, *, company_id: int, budget: BankingBudget, currency: str
) -> BankingBalance:
    """The budget's balance in `currency` (409 `CURRENCY_NOT_IN_BUDGET` if it has none)."""
    balance = await BalanceRepository(session, company_id).of_budget(budget.id, currency)
    if balance is None:
        raise CurrencyNotInBudget(f"The budget does not hold {currency}.")
    return balance


async def budget_holds(
    session: AsyncSession, *, company_id: int, budget: BankingBudget, currencies: Sequence[str]
) -> None:
    """The budget holds each of `currencies` (409 `CURRENCY_NOT_IN_BUDGET` naming the first it
    does not), checked in one read."""
    held = await BalanceRepository(session, company_id).of_budget_in(budget.id, currencies)
    for currency in currencies:
        if currency not in held:
            raise CurrencyNotInBudget(f"The budget does not hold {currency}.")


async def user_balance(
    session: AsyncSession, *, company_id: int, user_id: int, balance_id: str
) -> BankingBalance:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    balance = await BalanceRepository(session, company_id).find(balance_id)
    if balance is None or balance.user_id != user_id:
        raise BalanceNotFound()
    return balance
