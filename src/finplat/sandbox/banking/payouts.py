"""Sandbox: driving the banking provider's payments and batches, through the same callback
path a real provider's notifications take (the callbacks are delivered at once)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking.payouts.repository import PayoutTransactionRepository
from finplat.banking.payouts.schemas import PaymentBatchResponse, PayoutResponse
from finplat.banking.payouts.service import PayoutNotFound
from finplat.errors import Conflict, NotFound
from finplat.providers.banking.port import PaymentStatus
from finplat.providers.banking.sandbox.payments import SandboxPaymentSimulation, SimulatedBatch
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus
from finplat.transactions.models import Transaction

PROVIDER = BankProvider.BANKPROV.value


class PayoutNotPending(Conflict):
    code = "PAYOUT_NOT_PENDING"
    message = "The payout is already final."


class PayoutNotAtProvider(Conflict):
    code = "PAYOUT_NOT_AT_PROVIDER"
    message = "The banking provider never received this payout."


class PaymentBatchNotFound(NotFound):
    code = "PAYMENT_BATCH_NOT_FOUND"
    message = "No payment batch with that id."


class NoSimulation(Conflict):
    code = "SIMULATION_NOT_SUPPORTED"
    message = "The banking provider cannot simulate payments."


def _simulator(providers: Providers) -> SandboxPaymentSimulation:
    banking = configured(providers.banking, "No banking provider is configured.")
    if not isinstance(banking, SandboxPaymentSimulation):
        raise NoSimulation()
    return banking


async def _fresh(session: AsyncSession, company_id: int, tx_id: int) -> Transaction:
    tx = await PayoutTransactionRepository(session, company_id).find(tx_id, fresh=True)
    assert tx is not None
    return tx


async def advance_payout(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    payout_id: int,
    status: str,
) -> Transaction:
    tx = await PayoutTransactionRepository(session, company_id).find(payout_id)
    if tx is None:
        raise PayoutNotFound("No payout with that PayoutId in this company.")
    if TransactionStatus(tx.status) in FINAL_STATUSES:
        raise PayoutNotPending(f"The payout is already {tx.status}.")
    simulator = _simulator(providers)
    payment_id = tx.provider_reference
    if payment_id is None and tx.provider_key is not None:
        key = tx.provider_key
        banking = configured(providers.banking, "No banking provider is configured.")
        found = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="payment_status",
            call=lambda: banking.payment_by_key(company_id=company_id, idempotency_key=key),
            idempotent=True,
        )
        payment_id = found.payment_id if found is not None else None
    if payment_id is None:
        raise PayoutNotAtProvider()
    target = payment_id
    await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="advance_payment",
        call=lambda: simulator.advance_payment(
            company_id=company_id, payment_id=target, status=PaymentStatus(status)
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await _fresh(session, company_id, payout_id)


async def advance_batch(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    batch_id: str,
    status: str,
) -> PaymentBatchResponse:
    simulator = _simulator(providers)
    batch = await _batch_call(
        session,
        providers,
        lambda: simulator.advance_batch(company_id=company_id, batch_id=batch_id, status=status),
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await _batch_response(session, company_id, batch)


async def cancel_batch_order(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    batch_id: str,
) -> PaymentBatchResponse:
    simulator = _simulator(providers)
    batch = await _batch_call(
        session,
        providers,
        lambda: simulator.cancel_batch_order(company_id=company_id, batch_id=batch_id),
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await _batch_response(session, company_id, batch)


async def _batch_call(
    session: AsyncSession, providers: Providers, call: Callable[[], Awaitable[SimulatedBatch]]
) -> SimulatedBatch:
    try:
        result: SimulatedBatch = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="advance_payment",
            call=call,
            idempotent=False,
        )
    except ProviderRejected as refusal:
        if refusal.status == 404:
            raise PaymentBatchNotFound() from None
        raise
    return result


async def _batch_response(
    session: AsyncSession, company_id: int, batch: SimulatedBatch
) -> PaymentBatchResponse:
    repo = PayoutTransactionRepository(session, company_id)
    payouts = []
    for payment in batch.payments:
        tx = await repo.by_provider_reference(PROVIDER, payment.payment_id)
        if tx is not None:
            payouts.append(PayoutResponse.of(await _fresh(session, company_id, tx.id)))
    return PaymentBatchResponse(
        PaymentBatchId=batch.batch_id,
        Status=batch.status,
        FxOrderId=batch.order_id,
        FxOrderStatus=batch.order_status,
        Payouts=payouts,
    )
