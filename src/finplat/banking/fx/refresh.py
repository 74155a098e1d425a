"""Settling a PENDING FX trade from the provider's answer (transaction detail and
reconciliation call this through `finplat.transactions.refresh.refresh`)."""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.fx import service
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.refresh import refresher

log = structlog.get_logger("finplat.banking.fx")


@refresher(TransactionType.FX_TRADE)
async def refresh_fx_trade(
    session: AsyncSession, providers: Providers, transaction: Transaction
) -> None:
    """Settle a PENDING trade from the provider's answer, once: the transaction is locked
    after the provider call, so of parallel refreshes one settles and the rest find it done."""
    banking = providers.banking
    key = transaction.provider_key
    if banking is None or key is None:
        return
    company_id = transaction.company_id
    try:
        trade = await commit_then_call(
            session,
            providers.policy,
            provider=service.PROVIDER,
            operation="trade_status",
            call=lambda: banking.trade_by_key(company_id=company_id, idempotency_key=key),
            idempotent=True,
        )
    except ProviderUnavailable:
        # Still unknown: the transaction stays PENDING and is asked about again later.
        log.warning("fx_trade_status_unavailable", transaction_id=transaction.id)
        return
    if not await service.lock_pending(session, transaction):
        return
    if trade is None:
        await service.settle_lost_trade(session, company_id=company_id, transaction=transaction)
    else:
        await service.apply_trade(
            session, company_id=company_id, transaction=transaction, trade=trade
        )
