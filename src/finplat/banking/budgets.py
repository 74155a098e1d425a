"""Budgets: the banking provider's sub-accounts of a user's account, mirrored locally.

The provider is the system of record for which budgets exist; the platform gives each budget
and each of its currencies its own id (`bud_...`, `bal_...`) and a ledger account, the first
time it sees them (discovery, creation, or a callback about money arriving).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBudget
from finplat.banking.repository import BalanceRepository, BudgetRepository
from finplat.idempotency.service import Claim
from finplat.ledger import service as ledger
from finplat.ledger.models import LedgerAccount
from finplat.providers.banking.port import BankingProvider, ProviderBudget
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.names import BankProvider
from finplat.provisioning.models import ProviderAccount

BUDGET_ACCOUNT_CODE = "budget"
PROVIDER = BankProvider.BANKPROV.value
UNNAMED = "Budget"  # a budget first seen without a name


def new_budget_id() -> str:
    return f"bud_{secrets.token_hex(12)}"


def new_balance_id() -> str:
    return f"bal_{secrets.token_hex(12)}"


def account_key(budget_id: str) -> ledger.AccountKey:
    """The key of the ledger account mirroring a budget in each currency (never negative)."""
    return ledger.AccountKey(BUDGET_ACCOUNT_CODE, "budget", budget_id)


async def with_settlement(
    session: AsyncSession, *, company_id: int, budget_id: str, currency: str
) -> list[LedgerAccount]:
    """The budget's ledger account (`ledger_account`) and the company's settlement account in
    `currency`, where money from or to the provider passes: read together."""
    return await ledger.accounts_of(
        session,
        company_id=company_id,
        currency=currency,
        keys=[
            account_key(budget_id),
            ledger.company_key(company_id, ledger.CompanyAccount.SETTLEMENT),
        ],
    )


async def ledger_account(
    session: AsyncSession, *, company_id: int, budget_id: str, currency: str
) -> LedgerAccount:
    """The ledger account mirroring one currency of a budget (never negative)."""
    return await ledger.account(
        session,
        company_id=company_id,
        code=BUDGET_ACCOUNT_CODE,
        owner_type="budget",
        owner_id=budget_id,
        currency=currency,
    )


async def adopt(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    account_id: str,
    provider_budget_id: str,
    name: str | None,
    is_default: bool,
    currencies: Sequence[str],
) -> BankingBudget:
    """The local budget for a provider budget, created with its balances on first sight
    (safe under concurrent first sight: inserts ignore conflicts and read back). `name` is
    the provider's name for it, None when the provider's message does not say (a payment's
    callback need not): the budget keeps its name then."""
    budgets = BudgetRepository(session, company_id)
    await budgets.insert_if_absent(
        budget_id=new_budget_id(),
        user_id=user_id,
        provider=PROVIDER,
        account_id=account_id,
        provider_budget_id=provider_budget_id,
        name=name or UNNAMED,
        is_default=is_default,
    )
    budget = await budgets.by_provider_budget(PROVIDER, provider_budget_id)
    assert budget is not None
    if name is not None and budget.name != name:
        budget.name = name
    balances = BalanceRepository(session, company_id)
    for currency in currencies:
        if await balances.of_budget(budget.id, currency) is not None:
            continue
        account = await ledger_account(
            session, company_id=company_id, budget_id=budget.id, currency=currency
        )
        await balances.insert_if_absent(
            balance_id=new_balance_id(),
            user_id=user_id,
            budget_id=budget.id,
            currency=currency,
            ledger_account_id=account.id,
        )
    await session.flush()
    return budget


async def adopt_all(
    session: AsyncSession, *, company_id: int, user_id: int, found: Sequence[ProviderBudget]
) -> None:
    for budget in found:
        await adopt(
            session,
            company_id=company_id,
            user_id=user_id,
            account_id=budget.account_id,
            provider_budget_id=budget.budget_id,
            name=budget.name,
            is_default=budget.is_default,
            currencies=list(budget.balances),
        )


async def sync(
    session: AsyncSession,
    banking: BankingProvider,
    policy: CallPolicy,
    *,
    company_id: int,
    account: ProviderAccount,
) -> None:
    """Learn the account's budgets from the provider (a read: retried, no lock held)."""
    assert account.provider_account_id is not None
    account_id = account.provider_account_id
    found = await commit_then_call(
        session,
        policy,
        provider=PROVIDER,
        operation="list_budgets",
        call=lambda: banking.list_budgets(company_id=company_id, account_id=account_id),
        idempotent=True,
    )
    await adopt_all(session, company_id=company_id, user_id=account.user_id, found=found)


async def create(
    session: AsyncSession,
    banking: BankingProvider,
    policy: CallPolicy,
    *,
    claim: Claim,
    company_id: int,
    account: ProviderAccount,
    name: str,
    currencies: Sequence[str],
) -> BankingBudget:
    """Open another budget at the provider (keyed by the request's Idempotency-Key, so a
    retry after a lost answer gets the same budget) and adopt it."""
    assert account.provider_account_id is not None
    account_id = account.provider_account_id
    created = await commit_then_call(
        session,
        policy,
        provider=PROVIDER,
        operation="create_budget",
        call=lambda: banking.create_budget(
            company_id=company_id,
            account_id=account_id,
            idempotency_key=claim.derived_key("create-budget"),
            name=name,
            currencies=currencies,
        ),
        idempotent=True,
    )
    return await adopt(
        session,
        company_id=company_id,
        user_id=account.user_id,
        account_id=created.account_id,
        provider_budget_id=created.budget_id,
        name=created.name,
        is_default=created.is_default,
        currencies=list(created.balances),
    )
