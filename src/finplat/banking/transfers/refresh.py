"""Following up PENDING budget and user-to-master transfers with the banking provider."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.transfers import service
from finplat.providers.registry import Providers
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.refresh import refresher


@refresher(TransactionType.BUDGET_TRANSFER)
@refresher(TransactionType.MASTER_TRANSFER)
async def refresh_transfer(session: AsyncSession, providers: Providers, tx: Transaction) -> None:
    """Completed at the provider: post the reservation; refused: release it; never received
    ten minutes after the reservation: release it and fail the transaction."""
    await service.refresh(session, providers.banking, providers.policy, tx)
