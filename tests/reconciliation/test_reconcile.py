"""Reconciliation: pending transactions the provider decided are settled; provider balances
that differ from the ledger's available balance are reported, never corrected."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import pytest
import structlog.testing
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat import jobs
from finplat.errors import NotFound
from finplat.providers.banking.sandbox.models import SandboxBankprovBalance
from finplat.providers.errors import ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.reconciliation.report import ReconciliationReport
from finplat.reconciliation.service import UNDECIDED, reconcile
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from tests.banking.payouts.steps import pay, payout_setup, terms
from tests.banking.steps import available, funded_user
from tests.conftest import Tenant
from tests.onboarding import create_user, set_fault
from tests.transactions.steps import pending_transaction, refresher_for, transaction


async def run(app: FastAPI, company_id: int | None) -> ReconciliationReport:
    return await reconcile(app.state.session_factory, app.state.providers, company_id=company_id)


async def test_a_clean_ledger_has_no_differences(app: FastAPI, tenant: Tenant) -> None:
    await funded_user(tenant.client, "120.50", "EUR")
    report = await run(app, None)
    assert tenant.company_id in report.companies
    assert report.balances_checked == 5  # the default budget's five currencies
    assert report.differences == []
    assert report.unchecked == []
    assert report.ok
    assert "reconciliation OK" in report.summary()


async def test_a_tampered_provider_balance_is_reported_with_its_difference(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    user, budget = await funded_user(tenant.client, "100.00", "EUR")
    await session.execute(
        update(SandboxBankprovBalance)
        .where(
            SandboxBankprovBalance.company_id == tenant.company_id,
            SandboxBankprovBalance.currency == "EUR",
        )
        .values(amount_minor=7500)
    )
    await session.commit()
    report = await run(app, tenant.company_id)
    assert not report.ok
    (difference,) = report.differences
    assert difference.company_id == tenant.company_id
    assert difference.user_id == user["Id"]
    assert difference.budget_id == budget["BudgetId"]
    assert difference.currency == "EUR"
    assert (difference.ledger_minor, difference.provider_minor) == (10000, 7500)
    rendered = json.loads(report.to_json(), parse_float=Decimal)
    assert rendered["ok"] is False
    assert rendered["balances"]["differences"] == [
        {
            "companyId": tenant.company_id,
            "userId": user["Id"],
            "budgetId": budget["BudgetId"],
            "cardId": None,
            "currency": "EUR",
            "ledger": Decimal("100.00"),
            "provider": Decimal("75.00"),
            "difference": Decimal("-25.00"),
            "source": "bankprov",
            "note": None,
        }
    ]
    assert "difference -25.00" in report.summary()
    # Reported, not corrected: the ledger still says 100.00.
    assert await available(tenant.client, user["Id"], budget["BudgetId"], "EUR") == 100


async def test_a_pending_transaction_the_provider_decided_is_settled(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    pending = await pending_transaction(
        session, company_id=tenant.company_id, user_id=user["Id"], type_=TransactionType.FX_TRADE
    )

    async def provider_says_failed(
        session: AsyncSession, providers: Providers, tx: Transaction
    ) -> None:
        await transactions.settle(session, tx, status=TransactionStatus.FAILED, reason="refused")

    with refresher_for(TransactionType.FX_TRADE, provider_says_failed):
        report = await run(app, tenant.company_id)
    assert [(s.transaction_id, s.type, s.status) for s in report.settled] == [
        (pending.id, "FX_TRADE", "FAILED")
    ]
    assert report.pending == []
    assert (await transaction(tenant.client, pending.id)).json()["Status"] == "FAILED"
    assert f"transaction {pending.id} FX_TRADE -> FAILED" in report.summary()


async def test_an_undecided_or_unreachable_provider_leaves_transactions_pending_with_why(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    undecided = await pending_transaction(
        session, company_id=tenant.company_id, user_id=user["Id"], type_=TransactionType.PAYOUT
    )
    unreachable = await pending_transaction(
        session,
        company_id=tenant.company_id,
        user_id=user["Id"],
        type_=TransactionType.BUDGET_TRANSFER,
    )

    async def still_pending(session: AsyncSession, providers: Providers, tx: Transaction) -> None:
        return None

    async def provider_down(session: AsyncSession, providers: Providers, tx: Transaction) -> None:
        raise ProviderUnavailable()

    with (
        refresher_for(TransactionType.PAYOUT, still_pending),
        refresher_for(TransactionType.BUDGET_TRANSFER, provider_down),
    ):
        report = await run(app, tenant.company_id)
    assert report.settled == []
    reasons = {p.transaction_id: p.reason for p in report.pending}
    assert reasons == {
        undecided.id: UNDECIDED,
        unreachable.id: "refresh failed: PROVIDER_UNAVAILABLE",
    }
    assert report.ok  # pending is not a difference: the provider has not decided yet


async def test_an_account_whose_provider_fails_is_reported_unchecked(
    app: FastAPI, tenant: Tenant
) -> None:
    user, _ = await funded_user(tenant.client, "5.00", "GBP")
    await set_fault(tenant.client, "bankprov", "list_budgets", "error")
    report = await run(app, tenant.company_id)
    assert not report.ok
    assert report.differences == []
    (unchecked,) = report.unchecked
    assert (unchecked.company_id, unchecked.user_id) == (tenant.company_id, user["Id"])
    assert unchecked.account_id == user["AccountId"]
    assert unchecked.reason == "PROVIDER_REJECTED"
    assert unchecked.balances == 5
    rendered = json.loads(report.to_json())
    assert rendered["balances"]["unchecked"][0]["reason"] == "PROVIDER_REJECTED"


async def test_an_unknown_company_is_refused(app: FastAPI) -> None:
    with pytest.raises(NotFound):
        await run(app, 987_654_321)


async def test_a_payout_in_flight_is_no_difference(app: FastAPI, tenant: Tenant) -> None:
    """The provider debits a payout at once while the ledger reserves it: the provider's
    balance equals the ledger's available balance, not its posted one."""
    user, budget, payee = await payout_setup(tenant.client, "300.00")
    payout = await pay(tenant.client, user, terms(user, budget, payee, 120))
    report = await run(app, tenant.company_id)
    assert report.differences == []
    assert report.ok
    assert [p.transaction_id for p in report.pending] == [payout["TransactionId"]]
    assert report.pending[0].reason == UNDECIDED


async def test_the_background_job_warns_about_each_difference(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    user, budget = await funded_user(tenant.client, "10.00", "EUR")
    await session.execute(
        update(SandboxBankprovBalance)
        .where(
            SandboxBankprovBalance.company_id == tenant.company_id,
            SandboxBankprovBalance.currency == "EUR",
        )
        .values(amount_minor=900)
    )
    await session.commit()
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        loop = asyncio.create_task(
            jobs._reconciliation_loop(app.state.session_factory, app.state.providers, stop, 0.01)
        )
        for _ in range(500):
            if any(e["event"] == "reconciliation_difference" for e in logs):
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(loop, timeout=10)
    summary = next(e for e in logs if e["event"] == "reconciliation")
    assert summary["differences"] == 1
    warning = next(e for e in logs if e["event"] == "reconciliation_difference")
    assert warning["log_level"] == "warning"
    assert (warning["company_id"], warning["user_id"]) == (tenant.company_id, user["Id"])
    assert (warning["budget_id"], warning["currency"]) == (budget["BudgetId"], "EUR")
