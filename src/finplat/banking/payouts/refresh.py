"""Refreshing a pending payout from the banking provider (used by
`GET /api/v2/transactions/{id}`, the payout detail and reconciliation).

The provider is asked by its payment id, or, when the answer to the creation was lost, by
the key the payment was created under. A payment the provider never received is failed (and
its reservation released) only once it is older than `NEVER_RECEIVED_AFTER`: a creation still
in flight must not be mistaken for a lost one.
"""

from __future__ import annotations

from datetime import timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payouts import settlement
from finplat.kit.clock import utcnow
from finplat.providers.banking.port import ProviderPayment
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.refresh import refresher

PROVIDER = BankProvider.BANKPROV.value
NEVER_RECEIVED_AFTER = timedelta(minutes=10)
log = structlog.get_logger("finplat.banking.payouts")


@refresher(TransactionType.PAYOUT)
async def refresh_payout(session: AsyncSession, providers: Providers, tx: Transaction) -> None:
    banking = configured(providers.banking, "No banking provider is configured.")
    company_id, tx_id, created_at = tx.company_id, tx.id, tx.created_at
    reference, key = tx.provider_reference, tx.provider_key
    payment: ProviderPayment | None
    if reference is not None:
        payment_id = reference
        payment = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="payment_status",
            call=lambda: banking.payment(company_id=company_id, payment_id=payment_id),
            idempotent=True,
        )
    elif key is not None:
        provider_key = key
        payment = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="payment_status",
            call=lambda: banking.payment_by_key(
                company_id=company_id, idempotency_key=provider_key
            ),
            idempotent=True,
        )
    else:
        log.warning("payout_without_provider_key", transaction_id=tx_id)
        return
    if payment is None:
        if utcnow() - created_at >= NEVER_RECEIVED_AFTER:
            await settlement.fail(
                session, company_id=company_id, tx_id=tx_id, reason=settlement.NEVER_RECEIVED
            )
        return
    await settlement.apply(session, company_id=company_id, tx_id=tx_id, payment=payment)
