"""Crypto transfers (crypto-to-fiat `bankprov-deposits`) left `PENDING` because the rail's
answer or its callback was lost: each is refreshed from the rail by its key, one unit of work
per transfer, and reported as settled or still pending (type `CRYPTO_TRANSFER`)."""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.crypto.exchange import service as exchange
from finplat.crypto.transfers import repository
from finplat.crypto.transfers.models import TransferStatus
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.providers.registry import Providers
from finplat.reconciliation import crypto_card_loads
from finplat.reconciliation.report import (
    PendingTransaction,
    ReconciliationReport,
    SettledTransaction,
)

log = structlog.get_logger("finplat.reconciliation")
CRYPTO_TRANSFER = "CRYPTO_TRANSFER"
UNDECIDED = "the provider has not decided"


async def companies(session: AsyncSession) -> list[int]:
    found = set(await repository.companies_with_pending(session))
    return sorted(found | set(await crypto_card_loads.companies(session)))


async def settle(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    report: ReconciliationReport,
) -> None:
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        pending = await exchange.pending_transfers(session, company_id=company_id)
    for transfer_id in pending:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                transfer = await exchange.find_transfer(
                    session, company_id=company_id, transfer_id=transfer_id
                )
                if transfer is None or transfer.status != TransferStatus.PENDING.value:
                    continue
                await exchange.refresh(session, providers, transfer=transfer)
                settled = await exchange.find_transfer(
                    session, company_id=company_id, transfer_id=transfer_id
                )
                status = settled.status if settled is not None else TransferStatus.PENDING.value
        except ApiError as exc:
            log.warning("reconciliation_crypto_refresh_failed", transfer_id=transfer_id)
            report.pending.append(
                PendingTransaction(
                    company_id, transfer_id, CRYPTO_TRANSFER, f"refresh failed: {exc.code}"
                )
            )
            continue
        if status == TransferStatus.PENDING.value:
            report.pending.append(
                PendingTransaction(company_id, transfer_id, CRYPTO_TRANSFER, UNDECIDED)
            )
        else:
            report.settled.append(
                SettledTransaction(company_id, transfer_id, CRYPTO_TRANSFER, status)
            )
    await crypto_card_loads.settle(factory, providers, company_id, report)
