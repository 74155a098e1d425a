"""Payment requests: a user asks to be paid; a payer pays in full through the banking
provider (the money lands in the budget through the ledger), or the request is cancelled or
expires. Only a pending request can be cancelled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx

from finplat.kit.clock import set_clock
from tests.banking.steps import available, create_budget
from tests.conftest import TenantFactory
from tests.onboarding import set_fault
from tests.payments.steps import (
    cancel,
    create_request,
    events_of,
    pay,
    read,
    receiver,
    requested,
)


async def test_create_answers_a_pending_request_into_the_default_budget(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await receiver(api)
    before = datetime.now(UTC)
    created = await requested(api, user["Id"])
    assert created["Id"].startswith("prq_")
    assert created["Status"] == "PENDING"
    assert created["UserId"] == user["Id"]
    assert created["BudgetId"] == budget["BudgetId"]
    assert Decimal(str(created["Amount"])) == Decimal("49.90")
    assert created["Currency"] == "EUR"
    assert created["Description"] == "Dinner"
    assert created["Provider"] == "bankprov"
    expires = datetime.fromisoformat(created["ExpiresAt"])
    assert timedelta(days=6, hours=23) < expires - before <= timedelta(days=7, seconds=5)
    assert (await read(api, created["Id"])).json() == created
    [event] = await events_of(api, "payment_request.created")
    assert event["Data"]["paymentRequestId"] == created["Id"]


async def test_paying_credits_the_budget_once_through_the_ledger(api: httpx.AsyncClient) -> None:
    user, budget = await receiver(api)
    created = await requested(api, user["Id"], Amount=49.9)
    response = await pay(api, created["Id"], PayerName="Grace Hopper")
    assert response.status_code == 200, response.text
    paid = response.json()
    assert paid["Status"] == "PAID"
    assert paid["PayerName"] == "Grace Hopper"
    assert paid["PaidAt"] is not None
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("49.90")
    tx = (await api.get(f"/api/v2/transactions/{paid['TransactionId']}")).json()
    assert tx["Status"] == "COMPLETED"
    assert tx["Type"] == "INCOMING_PAYMENT"
    [event] = await events_of(api, "payment_request.paid")
    assert event["Data"]["transactionId"] == paid["TransactionId"]
    # A second payment of the same request is refused and moves nothing.
    again = await pay(api, created["Id"])
    assert again.status_code == 409
    assert again.json()["Code"] == "PROVIDER_REQUEST_NOT_PAYABLE"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("49.90")


async def test_a_partial_payment_is_refused_and_moves_nothing(api: httpx.AsyncClient) -> None:
    user, budget = await receiver(api)
    created = await requested(api, user["Id"], Amount="100.00")
    response = await pay(api, created["Id"], Amount="99.99")
    assert response.status_code == 400
    assert response.json()["Code"] == "PROVIDER_PARTIAL_PAYMENT"
    assert (await read(api, created["Id"])).json()["Status"] == "PENDING"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == 0


async def test_the_named_budget_receives_the_money(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    savings = await create_budget(api, user)
    created = await requested(api, user["Id"], BudgetId=savings["BudgetId"], Currency="GBP")
    assert created["BudgetId"] == savings["BudgetId"]
    assert (await pay(api, created["Id"])).status_code == 200
    assert await available(api, user["Id"], savings["BudgetId"], "GBP") == Decimal("49.90")


async def test_cancel_a_pending_request(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    created = await requested(api, user["Id"])
    response = await cancel(api, created["Id"])
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert response.json()["CancelledAt"] is not None
    [event] = await events_of(api, "payment_request.cancelled")
    assert event["Data"]["status"] == "CANCELLED"
    # The provider no longer takes a payment for it.
    refused = await pay(api, created["Id"])
    assert refused.status_code == 409
    assert (await read(api, created["Id"])).json()["Status"] == "CANCELLED"


async def test_cancelling_a_paid_request_is_409_not_pending(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    created = await requested(api, user["Id"])
    assert (await pay(api, created["Id"])).status_code == 200
    response = await cancel(api, created["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "PAYMENT_REQUEST_NOT_PENDING"
    assert (await read(api, created["Id"])).json()["Status"] == "PAID"


async def test_cancelling_a_cancelled_request_is_409_not_pending(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    created = await requested(api, user["Id"])
    assert (await cancel(api, created["Id"])).status_code == 200
    response = await cancel(api, created["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "PAYMENT_REQUEST_NOT_PENDING"


async def test_a_request_expires_on_time_and_cannot_be_paid_or_cancelled(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await receiver(api)
    expires = datetime.now(UTC) + timedelta(hours=1)
    created = await requested(api, user["Id"], ExpiresAt=expires.isoformat())
    assert datetime.fromisoformat(created["ExpiresAt"]) == expires
    set_clock(lambda: expires)
    read_back = (await read(api, created["Id"])).json()
    assert read_back["Status"] == "EXPIRED"
    assert read_back["ExpiredAt"] is not None
    [event] = await events_of(api, "payment_request.expired")
    assert event["Data"]["paymentRequestId"] == created["Id"]
    assert (await pay(api, created["Id"])).status_code == 409
    response = await cancel(api, created["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "PAYMENT_REQUEST_NOT_PENDING"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == 0


async def test_the_provider_refuses_payment_at_expiry_even_before_any_read(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await receiver(api)
    expires = datetime.now(UTC) + timedelta(hours=1)
    created = await requested(api, user["Id"], ExpiresAt=expires.isoformat())
    set_clock(lambda: expires + timedelta(seconds=1))
    response = await pay(api, created["Id"])
    assert response.status_code == 409
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == 0


async def test_the_maintenance_job_expires_due_requests(
    api: httpx.AsyncClient, session_factory: object
) -> None:
    from finplat.jobs import maintenance_once

    user, _ = await receiver(api)
    expires = datetime.now(UTC) + timedelta(minutes=5)
    created = await requested(api, user["Id"], ExpiresAt=expires.isoformat())
    set_clock(lambda: expires + timedelta(minutes=1))
    done = await maintenance_once(session_factory)  # type: ignore[arg-type]
    assert done["expired_payment_requests"] == 1
    assert len(await events_of(api, "payment_request.expired")) == 1
    assert (await read(api, created["Id"])).json()["Status"] == "EXPIRED"


async def test_expiry_outside_one_minute_to_90_days_is_400(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    now = datetime.now(UTC)
    for when in (now - timedelta(minutes=1), now + timedelta(days=91)):
        response = await create_request(api, user["Id"], ExpiresAt=when.isoformat())
        assert response.status_code == 400, response.text
        assert "ExpiresAt" in response.json()["ValidationErrors"]
    naive = await create_request(api, user["Id"], ExpiresAt="2026-12-30T10:00:00")
    assert naive.status_code == 400
    assert (await api.get("/api/v2/payments/requests")).json()["Items"] == []


async def test_a_currency_the_budget_does_not_hold_is_409(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    savings = await create_budget(api, user, Currencies=["EUR"])
    response = await create_request(api, user["Id"], BudgetId=savings["BudgetId"], Currency="GBP")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CURRENCY_NOT_IN_BUDGET"


async def test_amount_with_too_many_decimals_is_400(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    response = await create_request(api, user["Id"], Amount="10.001")
    assert response.status_code == 400


async def test_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await create_request(api, 987654321)
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_an_unknown_user_with_an_expiry_out_of_range_is_400_the_body_first(
    api: httpx.AsyncClient,
) -> None:
    response = await create_request(api, 999_999, ExpiresAt="2026-12-30T10:00:00")
    assert response.status_code == 400, response.text
    assert "ExpiresAt" in response.json()["ValidationErrors"]


async def test_the_same_idempotency_key_creates_one_request(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    headers = {"Idempotency-Key": "req-1"}
    first = await create_request(api, user["Id"], headers=headers)
    second = await create_request(api, user["Id"], headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert len((await api.get("/api/v2/payments/requests")).json()["Items"]) == 1


async def test_a_provider_timeout_creates_nothing_and_a_retry_with_the_key_issues_once(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await receiver(api)
    await set_fault(api, "bankprov", "create_payment_request", "timeout")
    headers = {"Idempotency-Key": "req-timeout"}
    lost = await create_request(api, user["Id"], headers=headers)
    assert lost.status_code == 503
    assert (await api.get("/api/v2/payments/requests")).json()["Items"] == []
    retried = await create_request(api, user["Id"], headers=headers)
    assert retried.status_code == 201, retried.text
    assert (await pay(api, retried.json()["Id"])).status_code == 200


async def test_list_filters_and_pages(api: httpx.AsyncClient) -> None:
    user, budget = await receiver(api)
    other, _ = await receiver(api)
    first = await requested(api, user["Id"], Amount=1)
    second = await requested(api, user["Id"], Amount=2)
    third = await requested(api, other["Id"], Amount=3)
    assert (await pay(api, second["Id"])).status_code == 200
    listed = (await api.get("/api/v2/payments/requests")).json()
    assert [r["Id"] for r in listed["Items"]] == [third["Id"], second["Id"], first["Id"]]
    mine = (await api.get("/api/v2/payments/requests", params={"userId": user["Id"]})).json()
    assert [r["Id"] for r in mine["Items"]] == [second["Id"], first["Id"]]
    paid = (await api.get("/api/v2/payments/requests", params={"status": "PAID"})).json()
    assert [r["Id"] for r in paid["Items"]] == [second["Id"]]
    by_budget = (
        await api.get("/api/v2/payments/requests", params={"budgetId": budget["BudgetId"]})
    ).json()
    assert [r["Id"] for r in by_budget["Items"]] == [second["Id"], first["Id"]]
    page = (await api.get("/api/v2/payments/requests", params={"pageSize": 2})).json()
    assert page["HasMore"] is True
    assert len(page["Items"]) == 2
    page2 = (await api.get("/api/v2/payments/requests", params={"pageSize": 2, "page": 2})).json()
    assert [r["Id"] for r in page2["Items"]] == [first["Id"]]
    assert page2["HasMore"] is False


async def test_the_pending_filter_leaves_out_requests_past_their_expiry(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await receiver(api)
    expires = datetime.now(UTC) + timedelta(hours=1)
    await requested(api, user["Id"], ExpiresAt=expires.isoformat())
    set_clock(lambda: expires)
    pending = await api.get("/api/v2/payments/requests", params={"status": "PENDING"})
    assert pending.json()["Items"] == []


async def test_another_companys_request_is_404(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    user, _ = await receiver(api)
    created = await requested(api, user["Id"])
    other = (await make_tenant("Other Ltd")).client
    for response in (
        await read(other, created["Id"]),
        await cancel(other, created["Id"]),
        await pay(other, created["Id"]),
    ):
        assert response.status_code == 404
        assert response.json()["Code"] == "PAYMENT_REQUEST_NOT_FOUND"
    assert (await other.get("/api/v2/payments/requests")).json()["Items"] == []
    assert (await read(api, created["Id"])).json()["Status"] == "PENDING"


async def test_a_lost_cancel_answer_is_finished_by_a_retry(api: httpx.AsyncClient) -> None:
    user, budget = await receiver(api)
    created = await requested(api, user["Id"])
    await set_fault(api, "bankprov", "cancel_payment_request", "timeout")
    assert (await cancel(api, created["Id"])).status_code == 503
    # The provider cancelled it: no payer can pay it any more.
    assert (await pay(api, created["Id"])).status_code == 409
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == 0
    retried = await cancel(api, created["Id"])
    assert retried.status_code == 200
    assert retried.json()["Status"] == "CANCELLED"
