"""Discovery: what a user holds, where (spec, Endpoints: accounts, balance aggregated across
providers, budgets, banking details, assets). Every returned resource names its `Provider`.

The aggregated balance sums the user's budgets at the banking provider and the user's cards
(not cancelled) at their card providers: a card's balance is the user's money too, held by
the provider that issued the card, so it is summed under that provider.

Balances are the ledger's: what the platform has settled with the provider (`Posted`), what is
reserved for operations the provider is still deciding (`PendingDebits`), what is announced
but not yet spendable (`PendingCredits`), and `Available` = posted - pending debits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts, budgets
from finplat.banking.models import BankingBalance, BankingBudget
from finplat.banking.repository import BalanceRepository, BudgetRepository
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository
from finplat.cards.status import CardStatus
from finplat.ledger import repository as ledger_repository
from finplat.ledger.service import Balance
from finplat.providers.banking.port import BankingDetails
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning import service as provisioning
from finplat.provisioning.models import ProviderAccount
from finplat.users import service as users

NO_BANKING = "No banking provider is configured."


@dataclass(frozen=True)
class BalanceView:
    balance: BankingBalance
    provider: BankProvider
    totals: Balance


class ProviderBalance(Protocol):
    """One balance the user holds at one provider."""

    @property
    def provider(self) -> BankProvider: ...

    @property
    def totals(self) -> Balance: ...


@dataclass(frozen=True)
class CardBalanceView:
    card: Card
    provider: BankProvider
    totals: Balance


@dataclass(frozen=True)
class BudgetView:
    budget: BankingBudget
    balances: list[BalanceView]


@dataclass(frozen=True)
class CurrencyTotal:
    currency: str
    posted: int
    pending_debits: int
    pending_credits: int
    by_provider: dict[BankProvider, int]  # available per provider

    @property
    def available(self) -> int:
        return self.posted - self.pending_debits


async def provider_accounts(
    session: AsyncSession, *, company_id: int, user_id: int
) -> list[ProviderAccount]:
    """The user's opened provider accounts (those with a provider account id)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    rows = await provisioning.accounts_of(session, company_id=company_id, user_id=user_id)
    return [row for row in rows if row.provider_account_id is not None]


async def balance_views(session: AsyncSession, rows: Sequence[BankingBalance]) -> list[BalanceView]:
    totals = await ledger_repository.balance_totals_many(
        session, account_ids=[row.ledger_account_id for row in rows]
    )
    return _budget_balance_views(rows, totals)


def _budget_balance_views(
    rows: Sequence[BankingBalance], totals: dict[int, tuple[int, int, int]]
) -> list[BalanceView]:
    return [
        BalanceView(
            row,
            BankProvider.BANKPROV,
            Balance(
                row.ledger_account_id, row.currency, *totals.get(row.ledger_account_id, (0, 0, 0))
            ),
        )
        for row in rows
    ]


async def budget_views(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> list[BudgetView]:
    """The user's budgets with their balances, after learning new ones from the provider."""
    account = await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    banking = configured(providers.banking, NO_BANKING)
    await budgets.sync(session, banking, providers.policy, company_id=company_id, account=account)
    found = await BudgetRepository(session, company_id).of_user(user_id)
    views = await balance_views(
        session, await BalanceRepository(session, company_id).of_budgets([b.id for b in found])
    )
    by_budget: dict[str, list[BalanceView]] = defaultdict(list)
    for view in views:
        by_budget[view.balance.budget_id].append(view)
    return [BudgetView(b, by_budget[b.id]) for b in found]


@dataclass(frozen=True)
class Holdings:
    budgets: list[BalanceView]
    cards: list[CardBalanceView]


async def holdings(session: AsyncSession, *, company_id: int, user_id: int) -> Holdings:
    """Every balance the user holds: each budget balance at the banking provider and the ledger
    balance of each card that is not cancelled, their totals read in one statement."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    budget_rows = await BalanceRepository(session, company_id).of_user(user_id)
    cards = [
        card
        for card in await CardRepository(session, company_id).list_of_user(user_id)
        if card.status != CardStatus.CANCELLED and card.ledger_account_id is not None
    ]
    totals = await ledger_repository.balance_totals_many(
        session,
        account_ids=[row.ledger_account_id for row in budget_rows]
        + [card.ledger_account_id for card in cards if card.ledger_account_id is not None],
    )
    return Holdings(
        _budget_balance_views(budget_rows, totals),
        [
            CardBalanceView(
                card,
                BankProvider(card.provider),
                Balance(
                    card.ledger_account_id,
                    card.currency,
                    *totals.get(card.ledger_account_id, (0, 0, 0)),
                ),
            )
            for card in cards
            if card.ledger_account_id is not None
        ],
    )


async def user_currency_totals(
    session: AsyncSession, *, company_id: int, user_id: int
) -> list[CurrencyTotal]:
    """Every balance the user holds, budgets and cards (not cancelled), summed per currency,
    with the available amount per provider (404 for a user not the company's)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    held = await BalanceRepository(session, company_id).holdings_by_currency(user_id)
    found: dict[str, CurrencyTotal] = {}
    for currency, provider, posted, pending_debits, pending_credits in held:
        total = found.get(currency) or CurrencyTotal(currency, 0, 0, 0, {})
        part = CurrencyTotal(currency, posted, pending_debits, pending_credits, {})
        found[currency] = CurrencyTotal(
            currency,
            posted=total.posted + posted,
            pending_debits=total.pending_debits + pending_debits,
            pending_credits=total.pending_credits + pending_credits,
            by_provider={**total.by_provider, BankProvider(provider): part.available},
        )
    return list(found.values())


async def balance_detail(
    session: AsyncSession, *, company_id: int, user_id: int, balance_id: str
) -> BalanceView:
    row = await accounts.user_balance(
        session, company_id=company_id, user_id=user_id, balance_id=balance_id
    )
    return (await balance_views(session, [row]))[0]


async def banking_details(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> BankingDetails:
    account = await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    banking = configured(providers.banking, NO_BANKING)
    assert account.provider_account_id is not None
    account_id = account.provider_account_id
    holder = f"{user.first_name} {user.last_name}"
    return await commit_then_call(
        session,
        providers.policy,
        provider=BankProvider.BANKPROV.value,
        operation="banking_details",
        call=lambda: banking.banking_details(
            company_id=company_id, account_id=account_id, holder_name=holder
        ),
        idempotent=True,
    )
