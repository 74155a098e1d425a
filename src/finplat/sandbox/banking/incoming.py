"""Sandbox: money arriving in a budget from outside (an incoming SEPA, FPS, SWIFT or crypto
credit), through the same callback path a real banking provider's notification takes."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking import accounts
from finplat.errors import ApiError, Conflict
from finplat.kit.money import Money
from finplat.providers.banking.port import SandboxBudgetSimulation
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.transactions import service as transactions
from finplat.transactions.models import Transaction


class CreditNotYetApplied(ApiError):
    """The provider credited the budget; its notification is still queued (it failed to
    apply, or another worker holds it) and the background delivery will apply it."""

    status = 503
    code = "PROVIDER_CALLBACK_PENDING"
    message = (
        "The sandbox provider credited the budget, but the platform has not applied its "
        "notification yet; it will shortly. Do not repeat the credit: list the budget's "
        "transactions to see it."
    )


# Which scheme carries which currency.
SCHEME_CURRENCIES: dict[str, tuple[str, ...]] = {
    "SEPA": ("EUR",),
    "FPS": ("GBP",),
    "SWIFT": ("EUR", "GBP", "USD"),
    "CRYPTO": ("USDC", "USDT"),
}


async def credit_budget(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    budget_id: str,
    money: Money,
    scheme: str,
    sender_name: str,
    reference: str | None,
) -> Transaction:
    """The provider credits its balance and notifies the platform; the notification is
    delivered at once, so the returned transaction is the one the callback recorded."""
    budget = await accounts.user_budget(
        session, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=money.currency
    )
    banking = configured(providers.banking, "No banking provider is configured.")
    if not isinstance(banking, SandboxBudgetSimulation):
        raise Conflict("The banking provider cannot simulate incoming payments.")
    simulator = banking
    received = await commit_then_call(
        session,
        providers.policy,
        provider=BankProvider.BANKPROV.value,
        operation="simulate_incoming",
        call=lambda: simulator.simulate_incoming(
            company_id=company_id,
            budget_id=budget.provider_budget_id,
            currency=money.currency,
            amount_minor=money.minor,
            scheme=scheme,
            sender_name=sender_name,
            reference=reference,
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    recorded = await transactions.by_provider_reference(
        session,
        company_id=company_id,
        provider=BankProvider.BANKPROV.value,
        reference=received.payment_id,
    )
    if recorded is None:
        raise CreditNotYetApplied()
    return recorded
