"""Mandates: created PENDING, authorised (or refused) asynchronously at the banking provider,
cancelled while pending or active, expired after their end date; the read shows what the
current period still allows."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import httpx

from finplat.kit.clock import set_clock
from tests.conftest import TenantFactory
from tests.onboarding import set_fault
from tests.payments.steps import (
    active_mandate,
    authorise,
    collect,
    create_mandate,
    events_of,
    mandate,
    read_mandate,
    receiver,
)


async def test_create_answers_a_pending_mandate_with_the_spec_fields(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await receiver(api)
    created = await mandate(api, user["Id"], EndDate="2027-12-31")
    assert created["Id"].startswith("mdt_")
    assert created["UserId"] == user["Id"]
    assert isinstance(created["CompanyId"], int)
    assert created["MaxAmount"] == "100.00"
    assert created["Currency"] == "EUR"
    assert created["Frequency"] == "MONTHLY"
    assert created["Status"] == "PENDING"
    assert created["Description"] == "Gym membership"
    assert created["ExternalReferenceId"] == "sub-1"
    assert created["StartDate"] == date.today().isoformat()
    assert created["EndDate"] == "2027-12-31"
    assert created["RemainingThisPeriod"] == "0.00"
    assert created["BudgetId"] == budget["BudgetId"]
    assert isinstance(created["CreatedAt"], str)
    assert isinstance(created["UpdatedAt"], str)
    assert await read_mandate(api, created["Id"]) == created
    assert len(await events_of(api, "mandate.created")) == 1


async def test_the_user_is_required(api: httpx.AsyncClient) -> None:
    body = {"MaxAmount": 5, "Currency": "EUR", "Frequency": "WEEKLY"}
    missing = await api.post("/api/v2/payments/mandates", json=body)
    assert missing.status_code == 400
    assert (await api.get("/api/v2/payments/mandates")).json()["Items"] == []


async def test_authorisation_activates_it_and_opens_the_allowance(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await receiver(api)
    created = await mandate(api, user["Id"])
    response = await authorise(api, created["Id"])
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "ACTIVE"
    assert response.json()["RemainingThisPeriod"] == "100.00"
    [event] = await events_of(api, "mandate.activated")
    assert event["Data"]["mandateId"] == created["Id"]
    assert (await authorise(api, created["Id"])).status_code == 409


async def test_a_refused_authorisation_fails_it(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    created = await mandate(api, user["Id"])
    response = await authorise(api, created["Id"], "REFUSED")
    assert response.json()["Status"] == "FAILED"
    assert response.json()["FailureReason"] == "AUTHORISATION_REFUSED"
    assert len(await events_of(api, "mandate.failed")) == 1
    cancel = await api.post(f"/api/v2/payments/mandates/{created['Id']}/cancel")
    assert cancel.status_code == 409
    assert cancel.json()["Code"] == "MANDATE_NOT_CANCELLABLE"


async def test_cancel_an_active_mandate(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api)
    response = await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert response.json()["RemainingThisPeriod"] == "0.00"
    assert len(await events_of(api, "mandate.cancelled")) == 1
    again = await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    assert again.status_code == 409


async def test_cancel_a_pending_mandate_then_authorisation_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await receiver(api)
    created = await mandate(api, user["Id"])
    response = await api.post(f"/api/v2/payments/mandates/{created['Id']}/cancel")
    assert response.json()["Status"] == "CANCELLED"
    assert (await authorise(api, created["Id"])).status_code == 409
    assert (await read_mandate(api, created["Id"]))["Status"] == "CANCELLED"


async def test_a_mandate_expires_after_its_end_date(api: httpx.AsyncClient) -> None:
    end = date.today() + timedelta(days=3)
    _, _, active = await active_mandate(api, EndDate=end.isoformat())
    later = datetime.combine(end + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    set_clock(lambda: later)
    read = await read_mandate(api, active["Id"])
    assert read["Status"] == "EXPIRED"
    assert read["RemainingThisPeriod"] == "0.00"
    assert len(await events_of(api, "mandate.expired")) == 1


async def test_dates_are_checked(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    past = await create_mandate(api, user["Id"], StartDate=yesterday)
    assert past.status_code == 400
    assert "StartDate" in past.json()["ValidationErrors"]
    start = (date.today() + timedelta(days=10)).isoformat()
    end = (date.today() + timedelta(days=5)).isoformat()
    reversed_ = await create_mandate(api, user["Id"], StartDate=start, EndDate=end)
    assert reversed_.status_code == 400
    assert "EndDate" in reversed_.json()["ValidationErrors"]


async def test_unknown_frequency_is_400(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    response = await create_mandate(api, user["Id"], Frequency="DAILY")
    assert response.status_code == 400


async def test_list_filters_by_user_and_status(api: httpx.AsyncClient) -> None:
    user, _, active = await active_mandate(api)
    pending = await mandate(api, user["Id"])
    other, _ = await receiver(api)
    await mandate(api, other["Id"])
    mine = (await api.get("/api/v2/payments/mandates", params={"userId": user["Id"]})).json()
    assert [m["Id"] for m in mine["Items"]] == [pending["Id"], active["Id"]]
    actives = (await api.get("/api/v2/payments/mandates", params={"status": "ACTIVE"})).json()
    assert [m["Id"] for m in actives["Items"]] == [active["Id"]]
    assert actives["Items"][0]["RemainingThisPeriod"] == "100.00"


async def test_another_companys_mandate_is_404(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    _, _, active = await active_mandate(api)
    other = (await make_tenant("Other Ltd")).client
    for response in (
        await other.get(f"/api/v2/payments/mandates/{active['Id']}"),
        await other.post(f"/api/v2/payments/mandates/{active['Id']}/cancel"),
        await authorise(other, active["Id"]),
    ):
        assert response.status_code == 404
        assert response.json()["Code"] == "MANDATE_NOT_FOUND"
    assert (await other.get("/api/v2/payments/mandates")).json()["Items"] == []
    assert (await read_mandate(api, active["Id"]))["Status"] == "ACTIVE"


async def test_a_lost_registration_answer_records_nothing_and_a_retry_registers_once(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await receiver(api)
    await set_fault(api, "bankprov", "create_mandate", "timeout")
    headers = {"Idempotency-Key": "mandate-timeout"}
    lost = await create_mandate(api, user["Id"], headers=headers)
    assert lost.status_code == 503
    assert (await api.get("/api/v2/payments/mandates")).json()["Items"] == []
    retried = await create_mandate(api, user["Id"], headers=headers)
    assert retried.status_code == 201, retried.text
    assert (await authorise(api, retried.json()["Id"])).json()["Status"] == "ACTIVE"


async def test_a_lost_cancel_answer_is_finished_by_a_retry_and_blocks_collections_meanwhile(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api)
    await set_fault(api, "bankprov", "cancel_mandate", "timeout")
    lost = await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    assert lost.status_code == 503
    # The provider cancelled it: a collection meanwhile fails with the typed reason.
    collected = await collect(api, active["Id"], 10)
    assert collected.status_code == 201, collected.text
    assert collected.json()["Status"] == "FAILED"
    assert collected.json()["FailureReason"] == "MANDATE_CANCELLED"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "100.00"
    retried = await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    assert retried.status_code == 200
    assert retried.json()["Status"] == "CANCELLED"
