"""Sandbox: the rail decides a crypto-to-fiat conversion. Completed, the rail pays the fiat
into the budget (the banking provider's incoming payment, `payment.received`) and reports
`conversion.updated`; failed, it only reports. Both callbacks are delivered at once."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking import accounts
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.exchange import service as exchange
from finplat.crypto.transfers.models import CryptoTransfer, TransferStatus
from finplat.errors import Conflict
from finplat.providers.banking.port import SandboxBudgetSimulation
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.port import SandboxConversionSimulation
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery

# The scheme that carries each fiat currency into a budget.
SCHEME_OF = {"EUR": "SEPA", "GBP": "FPS", "USD": "SWIFT"}
SENDER = "Crypto rail"


class TransferNotPending(Conflict):
    code = "TRANSFER_NOT_PENDING"
    message = "The transfer is already settled."


async def settle(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    transfer_id: str,
    completed: bool,
) -> CryptoTransfer:
    transfer = await exchange.transfer_of(
        session, providers, company_id=company_id, user_id=user_id, transfer_id=transfer_id
    )
    if transfer.status != TransferStatus.PENDING.value or transfer.provider_reference is None:
        raise TransferNotPending()
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, SandboxConversionSimulation):
        raise Conflict("The crypto rail cannot simulate conversions.")
    conversion_id = transfer.provider_reference
    if completed:
        assert transfer.budget_id is not None
        assert transfer.fiat_currency is not None
        assert transfer.fiat_amount_minor is not None
        budget = await accounts.find_budget(
            session, company_id=company_id, budget_id=transfer.budget_id
        )
        assert budget is not None
        bank = configured(providers.banking, "No banking provider is configured.")
        if not isinstance(bank, SandboxBudgetSimulation):
            raise Conflict("The banking provider cannot simulate incoming payments.")
        destination, fiat, amount = (
            budget.provider_budget_id,
            transfer.fiat_currency,
            transfer.fiat_amount_minor,
        )
        await commit_then_call(
            session,
            providers.policy,
            provider=BankProvider.BANKPROV.value,
            operation="simulate_incoming",
            call=lambda: bank.simulate_incoming(
                company_id=company_id,
                budget_id=destination,
                currency=fiat,
                amount_minor=amount,
                scheme=SCHEME_OF[fiat],
                sender_name=SENDER,
                reference=transfer_id,
            ),
            idempotent=False,
        )
    await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="settle_conversion",
        call=lambda: rail.settle_conversion(
            company_id=company_id, conversion_id=conversion_id, completed=completed
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await exchange.transfer_of(
        session, providers, company_id=company_id, user_id=user_id, transfer_id=transfer_id
    )
