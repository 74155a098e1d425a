"""Sandbox: a payer pays a payment request at the banking provider, which notifies the
platform through the same callback path a real provider's notification takes."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.errors import Conflict
from finplat.kit.money import requested_amount
from finplat.payments.requests import service as payment_requests
from finplat.payments.requests.models import PaymentRequest
from finplat.providers.banking.port import SandboxPaymentRequestSimulation
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery


async def pay(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    request_id: str,
    amount: Decimal | None,
    payer_name: str,
) -> PaymentRequest:
    """The payer pays `amount` of the request's currency (the requested amount when None); the
    provider's notification is delivered at once, so the answer shows the request after it."""
    request = await payment_requests.get(session, company_id=company_id, request_id=request_id)
    amount_minor = (
        request.amount_minor if amount is None else requested_amount(amount, request.currency).minor
    )
    provider_request_id = request.provider_request_id
    banking = configured(providers.banking, "No banking provider is configured.")
    if not isinstance(banking, SandboxPaymentRequestSimulation):
        raise Conflict("The banking provider cannot simulate payers.")
    simulator = banking
    await commit_then_call(
        session,
        providers.policy,
        provider=BankProvider.BANKPROV.value,
        operation="pay_payment_request",
        call=lambda: simulator.simulate_request_payment(
            company_id=company_id,
            request_id=provider_request_id,
            amount_minor=amount_minor,
            payer_name=payer_name,
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await payment_requests.get(
        session, company_id=company_id, request_id=request_id, fresh=True
    )
