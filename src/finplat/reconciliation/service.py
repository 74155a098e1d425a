"""One reconciliation run: settle what the providers decided, compare balances, report.

1. Every `PENDING` transaction goes through its domain's refresher (`finplat.transactions.
   refresh`), one unit of work per transaction, bound to its company: what the provider has
   decided is applied (the only change a run makes); the rest stays pending, with the reason.
   Card fundings left pending by a provider failure are settled the same way once they are a
   few minutes old (`finplat.reconciliation.card_fundings`), and money that reached a
   cancelled card afterwards is booked back (`finplat.reconciliation.cancelled_cards`).
2. Every balance source (`finplat.reconciliation.balances.BALANCE_CHECKERS`) compares the
   provider's balances with the ledger. Differences are reported, never corrected: a
   correction is an operator's decision, made with a new ledger transfer.

A provider that fails leaves its transactions pending and its accounts unchecked; an
unexpected failure of one company's part is reported and the run goes on.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.companies import repository as companies
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, NotFound
from finplat.kit.clock import utcnow
from finplat.providers.registry import Providers
from finplat.reconciliation import cancelled_cards, card_fundings, crypto_transfers, payments
from finplat.reconciliation.balances import BALANCE_CHECKERS, BalanceChecker
from finplat.reconciliation.report import (
    PendingTransaction,
    ReconciliationReport,
    RunError,
    SettledTransaction,
)
from finplat.transactions import refresh
from finplat.transactions import repository as transactions_repository
from finplat.transactions.kinds import TransactionStatus
from finplat.transactions.repository import TransactionRepository

log = structlog.get_logger("finplat.reconciliation")

UNDECIDED = "the provider has not decided"


class CompanyNotFound(NotFound):
    code = "COMPANY_NOT_FOUND"
    message = "No company with that id."


async def reconcile(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    *,
    company_id: int | None = None,
    checkers: Sequence[BalanceChecker] | None = None,
) -> ReconciliationReport:
    """Reconcile one company, or every company with pending transactions or balances."""
    chosen = BALANCE_CHECKERS if checkers is None else checkers
    report = ReconciliationReport(company_id=company_id, started_at=utcnow())
    async with unit_of_work(factory) as session:
        if company_id is not None:
            if await companies.get(session, company_id) is None:
                raise CompanyNotFound()
            scope = [company_id]
        else:
            found = set(await transactions_repository.companies_with_pending(session))
            found.update(await card_fundings.companies(session))
            found.update(await cancelled_cards.companies(session))
            found.update(await payments.companies(session))
            found.update(await crypto_transfers.companies(session))
            for checker in chosen:
                found.update(await checker.companies(session))
            scope = sorted(found)
    report.companies = scope
    for company in scope:
        await _settle_pending(factory, providers, company, report)
        try:
            await card_fundings.settle(factory, providers, company, report)
        except Exception as exc:  # one company's failure must not stop the others
            log.error(
                "reconciliation_card_fundings_failed",
                company_id=company,
                error_type=type(exc).__name__,
            )
            report.errors.append(RunError(company, "card fundings", type(exc).__name__))
        try:
            await payments.settle(factory, providers, company, report)
        except Exception as exc:  # one company's failure must not stop the others
            log.error(
                "reconciliation_payments_failed", company_id=company, error_type=type(exc).__name__
            )
            report.errors.append(RunError(company, "payments", type(exc).__name__))
        try:
            await crypto_transfers.settle(factory, providers, company, report)
        except Exception as exc:  # one company's failure must not stop the others
            log.error(
                "reconciliation_crypto_transfers_failed",
                company_id=company,
                error_type=type(exc).__name__,
            )
            report.errors.append(RunError(company, "crypto transfers", type(exc).__name__))
        try:
            await cancelled_cards.settle(factory, company, report)
        except Exception as exc:  # one company's failure must not stop the others
            log.error(
                "reconciliation_cancelled_cards_failed",
                company_id=company,
                error_type=type(exc).__name__,
            )
            report.errors.append(RunError(company, "cancelled cards", type(exc).__name__))
        for checker in chosen:
            try:
                report.add_check(await checker.check(factory, providers, company_id=company))
            except Exception as exc:  # one company's failure must not stop the others
                log.error(
                    "reconciliation_check_failed",
                    company_id=company,
                    source=checker.source,
                    error_type=type(exc).__name__,
                )
                report.errors.append(
                    RunError(company, f"{checker.source} balances", type(exc).__name__)
                )
    report.finished_at = utcnow()
    return report


async def _settle_pending(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    report: ReconciliationReport,
) -> None:
    try:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            pending = await TransactionRepository(session, company_id).pending_ids()
    except Exception as exc:
        log.error(
            "reconciliation_pending_failed", company_id=company_id, error_type=type(exc).__name__
        )
        report.errors.append(RunError(company_id, "pending transactions", type(exc).__name__))
        return
    for transaction_id in pending:
        outcome = await _settle_one(factory, providers, company_id, transaction_id)
        if isinstance(outcome, SettledTransaction):
            report.settled.append(outcome)
        elif outcome is not None:
            report.pending.append(outcome)


async def _settle_one(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    transaction_id: int,
) -> SettledTransaction | PendingTransaction | None:
    """Refresh one pending transaction in its own unit of work; None when it was settled
    meanwhile by someone else (a callback, a read)."""
    type_ = "?"
    try:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            transaction = await TransactionRepository(session, company_id).get(transaction_id)
            if transaction is None or transaction.status != TransactionStatus.PENDING.value:
                return None
            type_ = transaction.type
            ran = await refresh.refresh(session, providers, transaction)
            status = transaction.status
    except ApiError as exc:  # the provider failed or refused; a business rule of the refresher
        log.warning(
            "reconciliation_refresh_failed",
            company_id=company_id,
            transaction_id=transaction_id,
            type=type_,
            error_code=exc.code,
        )
        return PendingTransaction(company_id, transaction_id, type_, f"refresh failed: {exc.code}")
    except Exception as exc:
        log.error(
            "reconciliation_refresh_error",
            company_id=company_id,
            transaction_id=transaction_id,
            type=type_,
            error_type=type(exc).__name__,
        )
        return PendingTransaction(
            company_id, transaction_id, type_, f"refresh error: {type(exc).__name__}"
        )
    if not ran:
        return PendingTransaction(
            company_id, transaction_id, type_, f"no refresher for {type_} transactions"
        )
    if status == TransactionStatus.PENDING.value:
        return PendingTransaction(company_id, transaction_id, type_, UNDECIDED)
    return SettledTransaction(company_id, transaction_id, type_, status)


def log_report(report: ReconciliationReport) -> None:
    """The run's outcome in the logs: counts, then one warning per difference and per
    unchecked account (identifiers only)."""
    log.info(
        "reconciliation",
        companies=len(report.companies),
        settled=len(report.settled),
        pending=len(report.pending),
        balances_checked=report.balances_checked,
        differences=len(report.differences),
        unchecked=len(report.unchecked),
        errors=len(report.errors),
    )
    for difference in report.differences:
        log.warning(
            "reconciliation_difference",
            company_id=difference.company_id,
            user_id=difference.user_id,
            budget_id=difference.budget_id,
            card_id=difference.card_id,
            currency=difference.currency,
            source=difference.source,
        )
    for account in report.unchecked:
        log.warning(
            "reconciliation_unchecked",
            company_id=account.company_id,
            user_id=account.user_id,
            source=account.source,
            card_id=account.card_id,
            reason=account.reason,
        )
