"""Balance sources: each compares what one provider holds with the ledger's mirror of it.

A checker lists the companies it has balances for and checks one company at a time. Three
sources: the banking provider's budgets (`BankprovBudgets`, below), every card's balance at
its card programme (`finplat.reconciliation.card_balances.CardBalances`, with its own rules
for card movements in flight) and the crypto rail's custody per stablecoin
(`finplat.reconciliation.crypto_custody.CryptoCustody`, compared with posted balances).
Another source is one more `BalanceChecker` appended to `BALANCE_CHECKERS` (nothing else
changes: the run, the report, the command and the job iterate this list).

The comparison is with the ledger's **available** balance (posted - pending debits): money
reserved for an operation has already left the provider's balance (the provider debits at
once and refunds a failure), while money announced but not yet credited has not arrived.
Nothing is corrected here; every difference is reported. A difference seen while an
operation is in flight (a callback not yet delivered, say) disappears at the next run; one
that stays is real.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking.models import BankingBalance, BankingBudget
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.ledger import repository as ledger_repository
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers
from finplat.reconciliation import repository
from finplat.reconciliation.card_balances import CardBalances
from finplat.reconciliation.crypto_custody import CryptoCustody
from finplat.reconciliation.report import (
    NO_PROVIDER,
    BalanceCheck,
    BalanceDifference,
    UncheckedAccount,
)


class BalanceChecker(Protocol):
    source: str

    async def companies(self, session: AsyncSession) -> list[int]:
        """The companies holding balances of this source (system scope)."""
        ...

    async def check(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        *,
        company_id: int,
    ) -> BalanceCheck:
        """Compare every balance of the company at this source with the ledger. A provider
        failure leaves the affected accounts unchecked; it never raises."""
        ...


class BankprovBudgets:
    """The banking provider's budget balances against their ledger accounts, one provider
    call (`list_budgets`) per provider account."""

    source = BankProvider.BANKPROV.value

    async def companies(self, session: AsyncSession) -> list[int]:
        return await repository.companies_with_budget_balances(session)

    async def check(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        *,
        company_id: int,
    ) -> BalanceCheck:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            rows = await repository.budget_balances(session, company_id=company_id)
        by_account: dict[str, list[tuple[BankingBalance, BankingBudget]]] = defaultdict(list)
        for balance, budget in rows:
            by_account[budget.account_id].append((balance, budget))
        result = BalanceCheck()
        for account_id, group in by_account.items():
            await self._check_account(factory, providers, company_id, account_id, group, result)
        return result

    async def _check_account(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        company_id: int,
        account_id: str,
        group: list[tuple[BankingBalance, BankingBudget]],
        result: BalanceCheck,
    ) -> None:
        user_id = group[0][0].user_id

        def unchecked(reason: str) -> None:
            result.unchecked.append(
                UncheckedAccount(company_id, user_id, self.source, account_id, len(group), reason)
            )

        banking = providers.banking
        if banking is None:
            unchecked(NO_PROVIDER)
            return
        try:
            found = await commit_then_call(
                None,
                providers.policy,
                provider=self.source,
                operation="list_budgets",
                call=lambda: banking.list_budgets(company_id=company_id, account_id=account_id),
                idempotent=True,
            )
        except (ProviderUnavailable, ProviderRejected) as exc:
            unchecked(exc.code)
            return
        # The ledger is read after the provider answered, each side once.
        async with unit_of_work(factory) as session:
            totals = await ledger_repository.balance_totals_many(
                session, account_ids=[balance.ledger_account_id for balance, _ in group]
            )
        held = {
            (budget.budget_id, currency): amount
            for budget in found
            for currency, amount in budget.balances.items()
        }
        local_budget = {budget.provider_budget_id: budget.id for _, budget in group}
        mirrored: set[tuple[str, str]] = set()
        for balance, budget in group:
            key = (budget.provider_budget_id, balance.currency)
            mirrored.add(key)
            posted, pending_debits, _ = totals.get(balance.ledger_account_id, (0, 0, 0))
            available = posted - pending_debits
            result.checked += 1
            at_provider = held.get(key)
            if at_provider is None:
                result.differences.append(
                    BalanceDifference(
                        company_id,
                        user_id,
                        budget.id,
                        balance.currency,
                        ledger_minor=available,
                        provider_minor=0,
                        source=self.source,
                        note="the provider reports no such budget currency",
                    )
                )
            elif at_provider != available:
                result.differences.append(
                    BalanceDifference(
                        company_id,
                        user_id,
                        budget.id,
                        balance.currency,
                        ledger_minor=available,
                        provider_minor=at_provider,
                        source=self.source,
                    )
                )
        for (provider_budget_id, currency), amount in sorted(held.items()):
            if (provider_budget_id, currency) in mirrored or amount == 0:
                continue
            result.differences.append(
                BalanceDifference(
                    company_id,
                    user_id,
                    local_budget.get(provider_budget_id),
                    currency,
                    ledger_minor=0,
                    provider_minor=amount,
                    source=self.source,
                    note="held at the provider where the platform mirrors no balance",
                )
            )


BALANCE_CHECKERS: list[BalanceChecker] = [BankprovBudgets(), CardBalances(), CryptoCustody()]
