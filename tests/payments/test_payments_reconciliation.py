"""Reconciliation covers payment requests and mandates: when the banking provider's callback
is lost, the next run applies what the provider decided, once."""

from __future__ import annotations

from decimal import Decimal

from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.ledger.verification import verify
from finplat.payments.mandates.repository import MandateRepository
from finplat.payments.requests.repository import PaymentRequestRepository
from finplat.providers.banking.port import (
    SandboxMandateSimulation,
    SandboxPaymentRequestSimulation,
)
from finplat.providers.sandbox.delivery import deliver_due
from finplat.reconciliation.service import reconcile
from tests.banking.steps import available
from tests.conftest import Tenant
from tests.onboarding import set_fault
from tests.payments.steps import events_of, mandate, read, read_mandate, receiver, requested


async def test_a_lost_paid_callback_is_settled_by_reconciliation_once(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    api = tenant.client
    user, budget = await receiver(api)
    created = await requested(api, user["Id"], Amount="12.34")
    found = await PaymentRequestRepository(session, tenant.company_id).find(created["Id"])
    assert found is not None
    provider_request_id = found.provider_request_id
    await session.commit()  # the sandbox refuses a provider call while a transaction is open
    banking = app.state.providers.banking
    assert isinstance(banking, SandboxPaymentRequestSimulation)
    # The payer pays; the provider's callback is never delivered.
    await banking.simulate_request_payment(
        company_id=tenant.company_id,
        request_id=provider_request_id,
        amount_minor=1234,
        payer_name="Ada",
    )
    assert (await read(api, created["Id"])).json()["Status"] == "PENDING"
    await reconcile(app.state.session_factory, app.state.providers, company_id=tenant.company_id)
    assert (await read(api, created["Id"])).json()["Status"] == "PAID"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("12.34")
    # The callback arriving late changes nothing.
    await deliver_due(
        app.state.session_factory,
        secret=app.state.settings.provider_callback_secret,
        company_id=tenant.company_id,
    )
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("12.34")
    assert len(await events_of(api, "payment_request.paid")) == 1
    assert (await verify(session)).ok


async def test_a_lost_authorisation_callback_is_settled_by_reconciliation(
    app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    api = tenant.client
    user, _ = await receiver(api)
    created = await mandate(api, user["Id"])
    found = await MandateRepository(session, tenant.company_id).find(created["Id"])
    assert found is not None
    provider_mandate_id = found.provider_mandate_id
    await session.commit()
    banking = app.state.providers.banking
    assert isinstance(banking, SandboxMandateSimulation)
    await banking.decide_mandate(
        company_id=tenant.company_id, mandate_id=provider_mandate_id, approve=True
    )
    assert (await read_mandate(api, created["Id"]))["Status"] == "PENDING"
    await reconcile(app.state.session_factory, app.state.providers, company_id=tenant.company_id)
    read_back = await read_mandate(api, created["Id"])
    assert read_back["Status"] == "ACTIVE"
    assert read_back["RemainingThisPeriod"] == "100.00"
    assert len(await events_of(api, "mandate.activated")) == 1


async def test_a_provider_that_cannot_answer_leaves_them_pending(
    app: FastAPI, tenant: Tenant
) -> None:
    api = tenant.client
    user, _ = await receiver(api)
    created = await requested(api, user["Id"])
    pending_mandate = await mandate(api, user["Id"])
    await set_fault(api, "bankprov", "payment_request_status", "transient", count=10)
    await set_fault(api, "bankprov", "mandate_status", "transient", count=10)
    report = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert report.errors == []
    assert (await read(api, created["Id"])).json()["Status"] == "PENDING"
    assert (await read_mandate(api, pending_mandate["Id"]))["Status"] == "PENDING"
