"""Payment requests and mandates still pending: ask the banking provider what it decided.

A payer's payment or an account holder's authorisation normally arrives as the provider's
callback; when that callback is lost, this step applies the provider's state instead (the
same code paths, so a callback arriving later changes nothing). Collections are
`MANDATE_COLLECTION` transactions and settle with the other pending transactions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.payments.mandates import repository as mandates_repository
from finplat.payments.mandates import service as mandates
from finplat.payments.requests import repository as requests_repository
from finplat.payments.requests import service as requests
from finplat.providers.registry import Providers
from finplat.reconciliation.report import ReconciliationReport, RunError

log = structlog.get_logger("finplat.reconciliation")

Refresh = Callable[[AsyncSession, str], Awaitable[object]]


async def companies(session: AsyncSession) -> list[int]:
    """Companies with a pending payment request or mandate (system scope)."""
    found = set(await requests_repository.companies_with_pending(session))
    found.update(await mandates_repository.companies_with_pending(session))
    return sorted(found)


async def settle(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    report: ReconciliationReport,
) -> None:
    """Refresh each pending request and mandate of the company, one unit of work each."""
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        request_ids = await requests_repository.pending_ids(session, company_id=company_id)
        mandate_ids = await mandates_repository.pending_ids(session, company_id=company_id)

    async def refresh_request(session: AsyncSession, request_id: str) -> object:
        return await requests.refresh(
            session, providers, company_id=company_id, request_id=request_id
        )

    async def refresh_mandate(session: AsyncSession, mandate_id: str) -> object:
        return await mandates.refresh(
            session, providers, company_id=company_id, mandate_id=mandate_id
        )

    for ids, refresh, stage in (
        (request_ids, refresh_request, "payment requests"),
        (mandate_ids, refresh_mandate, "mandates"),
    ):
        for item_id in ids:
            await _one(factory, company_id, item_id, refresh, stage, report)


async def _one(
    factory: async_sessionmaker[AsyncSession],
    company_id: int,
    item_id: str,
    refresh: Refresh,
    stage: str,
    report: ReconciliationReport,
) -> None:
    try:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            await refresh(session, item_id)
    except ApiError as exc:  # the provider failed or refused: it stays pending until next run
        log.warning(
            "reconciliation_payments_refresh_failed",
            company_id=company_id,
            stage=stage,
            error_code=exc.code,
        )
    except Exception as exc:  # one item's failure must not stop the others
        log.error(
            "reconciliation_payments_refresh_error",
            company_id=company_id,
            stage=stage,
            error_type=type(exc).__name__,
        )
        report.errors.append(RunError(company_id, stage, type(exc).__name__))
