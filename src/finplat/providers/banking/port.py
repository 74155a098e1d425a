"""The banking provider's core-banking port: budgets, balances and account details.

A user's banking-provider account (opened by the onboarding capability) holds budgets; each
budget holds a balance in each of its currencies. The provider is the system of record for
those balances; the platform's ledger mirrors them and reconciliation compares the two.

Incoming money (SEPA or FPS credits to the account's IBAN) is reported with a
`payment.received` callback `{paymentId, accountId, budgetId, currency, amountMinor, scheme,
senderName, reference, receivedAt}`.

The other concerns of the same provider have their own port modules (payees, FX, payments,
transfers); `BankingProvider` is all of them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from finplat.providers.banking.fx_port import FxPort
from finplat.providers.banking.payees_port import PayeesPort
from finplat.providers.banking.payments_port import PaymentsPort
from finplat.providers.banking.transfers_port import TransfersPort

PAYMENT_RECEIVED = "payment.received"
# What a budget can hold: the fiat currencies of the account and the two stablecoins.
BUDGET_CURRENCIES: tuple[str, ...] = ("EUR", "GBP", "USD", "USDC", "USDT")


@dataclass(frozen=True)
class ProviderBudget:
    budget_id: str
    account_id: str
    name: str
    is_default: bool
    balances: dict[str, int]  # currency -> minor units held at the provider
    created_at: datetime


@dataclass(frozen=True)
class BankingDetails:
    """How the outside world pays into the account."""

    account_id: str
    account_holder_name: str
    iban: str
    bic: str
    bank_name: str
    bank_address: str
    account_number: str
    sort_code: str


@dataclass(frozen=True)
class IncomingPayment:
    payment_id: str
    budget_id: str
    currency: str
    amount_minor: int
    scheme: str
    sender_name: str
    reference: str | None
    received_at: datetime


class BudgetsPort(Protocol):
    async def banking_details(
        self, *, company_id: int, account_id: str, holder_name: str
    ) -> BankingDetails:
        """The account's IBAN, BIC and UK details. Only an active account has them."""
        ...

    async def list_budgets(self, *, company_id: int, account_id: str) -> list[ProviderBudget]:
        """The account's budgets, oldest first; an active account always has its default
        budget."""
        ...

    async def create_budget(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        name: str,
        currencies: Sequence[str],
    ) -> ProviderBudget:
        """Open another budget (a repeat with the same key returns the first)."""
        ...


@runtime_checkable
class SandboxBudgetSimulation(Protocol):
    """What only the sandbox provider offers: money arriving from outside."""

    async def simulate_incoming(
        self,
        *,
        company_id: int,
        budget_id: str,
        currency: str,
        amount_minor: int,
        scheme: str,
        sender_name: str,
        reference: str | None,
    ) -> IncomingPayment: ...


class BankingProvider(BudgetsPort, PayeesPort, FxPort, PaymentsPort, TransfersPort, Protocol):
    """Everything the platform asks of the banking provider once an account is open."""
