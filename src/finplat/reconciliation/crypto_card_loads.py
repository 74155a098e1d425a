"""Crypto card loads left `PENDING` because the rail's answer or its callback was lost: each
is refreshed from the rail by its key, one unit of work per load, and reported as settled or
still pending (type `CRYPTO_CARD_LOAD`). A load the refresh confirms is credited to its card by
the crypto top-up job, once."""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.crypto.cardloads import repository
from finplat.crypto.cardloads import service as cardloads
from finplat.crypto.cardloads.models import CardLoadStatus
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.providers.registry import Providers
from finplat.reconciliation.report import (
    PendingTransaction,
    ReconciliationReport,
    SettledTransaction,
)

log = structlog.get_logger("finplat.reconciliation")
CRYPTO_CARD_LOAD = "CRYPTO_CARD_LOAD"
UNDECIDED = "the provider has not decided"


async def companies(session: AsyncSession) -> list[int]:
    return await repository.companies_with_pending(session)


async def settle(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    report: ReconciliationReport,
) -> None:
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        pending = await cardloads.pending_loads(session, company_id=company_id)
    for load_id in pending:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                status = await cardloads.refresh(
                    session, providers, company_id=company_id, load_id=load_id
                )
        except ApiError as exc:
            log.warning("reconciliation_crypto_card_load_refresh_failed", load_id=load_id)
            report.pending.append(
                PendingTransaction(
                    company_id, load_id, CRYPTO_CARD_LOAD, f"refresh failed: {exc.code}"
                )
            )
            continue
        if status == CardLoadStatus.PENDING.value:
            report.pending.append(
                PendingTransaction(company_id, load_id, CRYPTO_CARD_LOAD, UNDECIDED)
            )
        else:
            report.settled.append(SettledTransaction(company_id, load_id, CRYPTO_CARD_LOAD, status))
