"""Refreshing a pending collection from the banking provider (the collection read,
`GET /api/v2/transactions/{id}` and reconciliation), by the key it was created under."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.payments.collections import service
from finplat.providers.calls import commit_then_call
from finplat.providers.registry import Providers, configured
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.refresh import refresher


@refresher(TransactionType.MANDATE_COLLECTION)
async def refresh_collection(session: AsyncSession, providers: Providers, tx: Transaction) -> None:
    banking = configured(providers.banking, service.NO_BANKING)
    company_id, tx_id, key = tx.company_id, tx.id, tx.provider_key
    assert key is not None
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=service.PROVIDER,
        operation="collection_status",
        call=lambda: banking.collection_by_key(company_id=company_id, idempotency_key=key),
        idempotent=True,
    )
    if answer is None:
        await service.never_received(session, company_id=company_id, tx=tx)
        return
    await service.apply(session, company_id=company_id, tx_id=tx_id, answer=answer)
