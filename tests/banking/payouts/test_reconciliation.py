"""Uncertain and refused provider outcomes: a payout whose creation answer was lost stays
PENDING with its money reserved until the provider's state decides it (refresher), and one
the provider never received is released after ten minutes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.config import Settings
from finplat.kit.clock import set_clock
from finplat.providers.banking.port import PaymentStatus
from finplat.providers.banking.sandbox.payments import SandboxPaymentSimulation
from finplat.transactions import refresh
from finplat.transactions import service as transactions
from finplat.transactions.models import Transaction
from tests.banking.payouts.steps import (
    approved,
    balance,
    create,
    events_of,
    get_payout,
    payout_setup,
    terms,
)
from tests.callbacks import signed
from tests.onboarding import set_fault


async def _refresh(app: FastAPI, session: AsyncSession, company_id: int, tx_id: int) -> str:
    """Refresh the payout from the provider as reconciliation does; its status after."""
    tx = await transactions.get(session, company_id=company_id, transaction_id=tx_id)
    await session.refresh(tx)  # the HTTP calls changed it through other sessions
    await refresh.refresh(session, app.state.providers, tx)
    await session.commit()
    await session.refresh(tx)
    # The test calls the API next, which calls providers: no transaction may stay open.
    await session.commit()
    return tx.status


async def _company_id(api: httpx.AsyncClient) -> int:
    response = await api.get("/api/v2/company/configuration")
    assert response.status_code == 200, response.text
    return int(response.json()["CompanyId"])


async def test_a_create_whose_provider_call_times_out_is_pending_until_the_provider_decides(
    api: httpx.AsyncClient, app: FastAPI, session: AsyncSession
) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 400)
    approval = await approved(api, user, body)
    await set_fault(api, "bankprov", "create_payment", "timeout")
    response = await create(api, user, body, approval["ApprovalId"])
    assert response.status_code == 201, response.text
    payout = response.json()
    assert payout["Status"] == "PENDING"
    assert payout["StatusReason"] == "PROVIDER_OUTCOME_UNCERTAIN"
    assert payout["PaymentBatchId"] is None
    assert await balance(api, user, budget["BudgetId"], "EUR") == {
        "Posted": 1000,
        "PendingDebits": 400,
        "Available": 600,
    }
    company_id = await _company_id(api)
    # The provider did receive it: found by its key, still pending there.
    assert await _refresh(app, session, company_id, payout["PayoutId"]) == "PENDING"
    found = await get_payout(api, user, payout["PayoutId"])
    assert found["StatusReason"] is None
    assert found["PaymentBatchId"].startswith("bp_bat_")
    # The provider executes it; the refresher settles it from the provider's state.
    banking = app.state.providers.banking
    assert isinstance(banking, SandboxPaymentSimulation)
    tx = await transactions.get(session, company_id=company_id, transaction_id=payout["PayoutId"])
    await session.commit()  # the sandbox refuses a provider call while a transaction is open
    assert tx.provider_reference is not None
    await banking.advance_payment(
        company_id=company_id, payment_id=tx.provider_reference, status=PaymentStatus.COMPLETED
    )
    assert await _refresh(app, session, company_id, payout["PayoutId"]) == "COMPLETED"
    assert await balance(api, user, budget["BudgetId"], "EUR") == {
        "Posted": 600,
        "PendingDebits": 0,
        "Available": 600,
    }
    assert len(await events_of(api, "payout.completed")) == 1


async def test_a_payout_the_provider_never_received_is_released_after_ten_minutes(
    api: httpx.AsyncClient, app: FastAPI, session: AsyncSession
) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 400)
    approval = await approved(api, user, body)
    await set_fault(api, "bankprov", "create_payment", "transient", count=10)
    response = await create(api, user, body, approval["ApprovalId"])
    assert response.status_code == 201, response.text
    payout = response.json()
    assert (payout["Status"], payout["StatusReason"]) == ("PENDING", "PROVIDER_OUTCOME_UNCERTAIN")
    company_id = await _company_id(api)
    # Too early to conclude: the creation might still be on its way.
    assert await _refresh(app, session, company_id, payout["PayoutId"]) == "PENDING"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 600
    later = datetime.now(UTC) + timedelta(minutes=11)
    set_clock(lambda: later)
    assert await _refresh(app, session, company_id, payout["PayoutId"]) == "FAILED"
    found = await get_payout(api, user, payout["PayoutId"])
    assert found["StatusReason"] == "PROVIDER_NEVER_RECEIVED"
    assert await balance(api, user, budget["BudgetId"], "EUR") == {
        "Posted": 1000,
        "PendingDebits": 0,
        "Available": 1000,
    }


async def test_a_provider_refusal_fails_the_payout_and_releases_the_funds(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 400)
    approval = await approved(api, user, body)
    await set_fault(api, "bankprov", "create_payment", "error", HttpStatus=422)
    headers = {"Idempotency-Key": "refused-1"}
    response = await create(api, user, body, approval["ApprovalId"], **headers)
    assert response.status_code == 422
    assert response.json()["Code"] == "PROVIDER_REJECTED"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 1000
    [event] = await events_of(api, "payout.failed")
    assert event["Data"]["reason"] == "PROVIDER_REJECTED"
    listed = await api.get(
        "/api/v2/banking/payouts/" + str(event["Data"]["payoutId"]), params={"userId": user["Id"]}
    )
    assert listed.json()["Status"] == "FAILED"
    # The refusal is the key's answer: a retry does not pay.
    again = await create(api, user, body, approval["ApprovalId"], **headers)
    assert again.status_code == 422
    assert again.headers["Idempotent-Replayed"] == "true"


async def test_the_payout_detail_refreshes_a_pending_payout(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 100)
    approval = await approved(api, user, body)
    payout = (await create(api, user, body, approval["ApprovalId"])).json()
    company_id = await _company_id(api)
    banking = app.state.providers.banking
    assert isinstance(banking, SandboxPaymentSimulation)
    # The provider fails it without its callback reaching the platform yet.
    payment = await app.state.providers.banking.payment_by_key(
        company_id=company_id, idempotency_key=await _key(app, company_id, payout["PayoutId"])
    )
    await banking.advance_payment(
        company_id=company_id, payment_id=payment.payment_id, status=PaymentStatus.FAILED
    )
    found = await get_payout(api, user, payout["PayoutId"])
    assert found["Status"] == "FAILED"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 1000


async def _key(app: FastAPI, company_id: int, tx_id: int) -> str:
    async with app.state.session_factory() as session:
        tx = await transactions.get(session, company_id=company_id, transaction_id=tx_id)
        assert tx.provider_key is not None
        return tx.provider_key


async def _uncertain_payout(
    api: httpx.AsyncClient, app: FastAPI, company_id: int
) -> tuple[dict[str, Any], str]:
    """A payout whose creation answer was lost (`PENDING`, uncertain): it and its key."""
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 400)
    approval = await approved(api, user, body)
    await set_fault(api, "bankprov", "create_payment", "timeout")
    response = await create(api, user, body, approval["ApprovalId"])
    assert response.status_code == 201, response.text
    payout = response.json()
    assert payout["StatusReason"] == "PROVIDER_OUTCOME_UNCERTAIN"
    return payout, await _key(app, company_id, payout["PayoutId"])


async def _stored(app: FastAPI, company_id: int, tx_id: int) -> Transaction:
    """The payout as stored (the detail route would refresh it from the provider first)."""
    async with app.state.session_factory() as session:
        return await transactions.get(session, company_id=company_id, transaction_id=tx_id)


async def _status_changed(
    anonymous: httpx.AsyncClient, settings: Settings, company_id: int, data: dict[str, Any]
) -> httpx.Response:
    """Deliver a signed `payment.status_changed` callback with `data`."""
    callback = signed(
        settings.provider_callback_secret,
        company_id=company_id,
        type_="payment.status_changed",
        data=data,
        event_id="evt_status_1",
    )
    return await anonymous.post("/providers/bankprov/callbacks", **callback)


async def test_a_status_callback_whose_payment_id_exceeds_its_column_is_a_400(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, app: FastAPI, settings: Settings
) -> None:
    company_id = await _company_id(api)
    payout, key = await _uncertain_payout(api, app, company_id)
    response = await _status_changed(
        anonymous,
        settings,
        company_id,
        {"paymentId": "p" * 65, "status": "COMPLETED", "idempotencyKey": key},
    )
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert list(response.json()["ValidationErrors"]) == ["data.paymentId"]
    tx = await _stored(app, company_id, payout["PayoutId"])
    assert (tx.status, tx.status_reason) == ("PENDING", "PROVIDER_OUTCOME_UNCERTAIN")
    assert tx.provider_reference is None


async def test_a_status_callback_without_a_text_payment_id_is_a_400_not_stored_as_its_str(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, app: FastAPI, settings: Settings
) -> None:
    company_id = await _company_id(api)
    payout, key = await _uncertain_payout(api, app, company_id)
    response = await _status_changed(
        anonymous,
        settings,
        company_id,
        {"paymentId": None, "status": "PROCESSING", "idempotencyKey": key},
    )
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert list(response.json()["ValidationErrors"]) == ["data.paymentId"]
    tx = await _stored(app, company_id, payout["PayoutId"])
    assert tx.provider_reference is None  # had been "None"
