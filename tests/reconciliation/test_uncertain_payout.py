"""The issue's end-to-end rule: a payout whose provider call times out ends PENDING, is never
reported COMPLETED while the provider has not decided, and reconciliation settles it from the
provider's state; the ledger verifies at every step."""

from __future__ import annotations

from decimal import Decimal

from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.ledger.verification import verify
from finplat.providers.banking.port import PaymentStatus
from finplat.providers.banking.sandbox.payments import SandboxPaymentSimulation
from finplat.reconciliation.service import reconcile
from finplat.transactions import service as transactions
from tests.banking.payouts.steps import approved, balance, create, get_payout, payout_setup, terms
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def test_a_timed_out_payout_stays_pending_and_is_settled_by_reconciliation(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    api = tenant.client
    user, budget, payee = await payout_setup(api, "500.00")
    body = terms(user, budget, payee, 120)
    approval = await approved(api, user, body)
    await set_fault(api, "bankprov", "create_payment", "timeout")

    created = await create(api, user, body, approval["ApprovalId"])
    assert created.status_code == 201, created.text
    payout_id = created.json()["PayoutId"]
    assert created.json()["Status"] == "PENDING"
    assert (await get_payout(api, user, payout_id))["Status"] == "PENDING"
    tx_status = (await api.get(f"/api/v2/transactions/{payout_id}")).json()["Status"]
    assert tx_status == "PENDING"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 380

    # The provider has the payment but has not decided: reconciliation leaves it pending.
    first = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert [p.transaction_id for p in first.pending] == [payout_id]
    assert first.settled == []
    assert first.differences == []

    # The provider executes it (its callback is lost: never delivered); reconciliation settles.
    banking = app.state.providers.banking
    assert isinstance(banking, SandboxPaymentSimulation)
    tx = await transactions.get(session, company_id=tenant.company_id, transaction_id=payout_id)
    await session.refresh(tx)
    await session.commit()  # the sandbox refuses a provider call while a transaction is open
    assert tx.provider_reference is not None
    await banking.advance_payment(
        company_id=tenant.company_id,
        payment_id=tx.provider_reference,
        status=PaymentStatus.COMPLETED,
    )
    second = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert [(s.transaction_id, s.status) for s in second.settled] == [(payout_id, "COMPLETED")]
    assert second.pending == []
    assert second.differences == []
    assert (await get_payout(api, user, payout_id))["Status"] == "COMPLETED"
    assert await balance(api, user, budget["BudgetId"], "EUR") == {
        "Posted": Decimal("380"),
        "PendingDebits": 0,
        "Available": Decimal("380"),
    }
    report = await verify(session)
    assert report.ok, report.summary()
