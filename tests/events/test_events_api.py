"""Events and deliveries through the API, scoped to the company."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.companies import service as companies
from finplat.events import service as events
from finplat.events.models import WebhookDelivery
from finplat.events.repository import DeliveryRepository
from finplat.kit.clock import utcnow
from tests.conftest import Tenant, TenantFactory
from tests.databases import backend
from tests.isolated import isolated

CONFIG = "/api/v2/company/configuration"


async def with_endpoint(tenant: Tenant) -> None:
    response = await tenant.client.put(CONFIG, json={"WebhookUrl": "http://localhost:9/hooks"})
    assert response.status_code == 200


async def test_test_event_is_recorded_with_a_pending_delivery(tenant: Tenant) -> None:
    await with_endpoint(tenant)
    sent = await tenant.client.post("/api/v2/webhooks/test")
    assert sent.status_code == 202
    event_id = sent.json()["EventId"]
    event = (await tenant.client.get(f"/api/v2/events/{event_id}")).json()
    assert event["Type"] == "webhook.test"
    assert event["Domain"] == "webhook"
    assert [d["Status"] for d in event["Deliveries"]] == ["pending"]
    assert event["Deliveries"][0]["Id"] == sent.json()["DeliveryIds"][0]


async def test_test_event_needs_a_configured_endpoint(tenant: Tenant) -> None:
    response = await tenant.client.post("/api/v2/webhooks/test")
    assert response.status_code == 409
    assert response.json()["Code"] == "WEBHOOK_ENDPOINT_NOT_CONFIGURED"


async def test_events_are_listed_newest_first_and_filterable(tenant: Tenant) -> None:
    await with_endpoint(tenant)
    await tenant.client.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 5}
    )
    await tenant.client.post("/api/v2/webhooks/test")
    types = [e["Type"] for e in (await tenant.client.get("/api/v2/events")).json()["Items"]]
    assert types == ["webhook.test", "company.funded"]
    only = (await tenant.client.get("/api/v2/events", params={"type": "company.funded"})).json()
    assert [e["Type"] for e in only["Items"]] == ["company.funded"]


async def test_deliveries_are_listed_and_filtered_by_status_and_event(tenant: Tenant) -> None:
    await with_endpoint(tenant)
    first = (await tenant.client.post("/api/v2/webhooks/test")).json()
    await tenant.client.post("/api/v2/webhooks/test")
    pending = (
        await tenant.client.get("/api/v2/webhooks/deliveries", params={"status": "pending"})
    ).json()
    assert len(pending["Items"]) == 2
    by_event = (
        await tenant.client.get("/api/v2/webhooks/deliveries", params={"eventId": first["EventId"]})
    ).json()
    assert [d["Id"] for d in by_event["Items"]] == first["DeliveryIds"]
    bad = await tenant.client.get("/api/v2/webhooks/deliveries", params={"status": "lost"})
    assert bad.status_code == 400


async def set_delivery(
    factory: async_sessionmaker[AsyncSession], delivery_id: str, **values: Any
) -> None:
    async with factory() as session:
        await session.execute(
            update(WebhookDelivery).where(WebhookDelivery.id == delivery_id).values(**values)
        )
        await session.commit()


async def a_retrying_delivery(
    tenant: Tenant, factory: async_sessionmaker[AsyncSession], *, due_in: timedelta
) -> str:
    """A delivery whose third attempt timed out and whose fourth is due in `due_in`."""
    await with_endpoint(tenant)
    delivery: str = (await tenant.client.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
    await set_delivery(
        factory,
        delivery,
        status="retrying",
        attempts=3,
        last_error="timeout",
        last_attempt_at=utcnow(),
        next_attempt_at=utcnow() + due_in,
    )
    return delivery


async def test_a_delivery_not_attempted_yet_cannot_be_retried(tenant: Tenant) -> None:
    await with_endpoint(tenant)
    delivery = (await tenant.client.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
    response = await tenant.client.post(f"/api/v2/webhooks/deliveries/{delivery}/retry")
    assert response.status_code == 409
    assert response.json()["Code"] == "WEBHOOK_DELIVERY_NOT_RETRYABLE"


async def test_a_succeeded_delivery_cannot_be_retried(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    await with_endpoint(tenant)
    delivery = (await tenant.client.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
    await set_delivery(
        session_factory,
        delivery,
        status="succeeded",
        attempts=1,
        delivered_at=utcnow(),
        next_attempt_at=None,
    )
    response = await tenant.client.post(f"/api/v2/webhooks/deliveries/{delivery}/retry")
    assert response.status_code == 409
    assert response.json()["Code"] == "WEBHOOK_DELIVERY_NOT_RETRYABLE"


async def test_retrying_a_retrying_delivery_makes_it_due_now_keeping_its_attempts(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    delivery = await a_retrying_delivery(tenant, session_factory, due_in=timedelta(hours=2))
    before = utcnow()
    response = await tenant.client.post(f"/api/v2/webhooks/deliveries/{delivery}/retry")
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["Status"], body["Attempts"], body["LastError"]) == ("retrying", 3, "timeout")
    assert before <= datetime.fromisoformat(body["NextAttemptAt"]) <= utcnow()


async def test_a_retrying_delivery_already_due_is_not_queued_again(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    delivery = await a_retrying_delivery(tenant, session_factory, due_in=timedelta(hours=2))
    retry = f"/api/v2/webhooks/deliveries/{delivery}/retry"
    assert (await tenant.client.post(retry)).status_code == 202
    again = await tenant.client.post(retry)
    assert again.status_code == 409
    assert again.json()["Code"] == "WEBHOOK_DELIVERY_NOT_RETRYABLE"


async def test_retrying_and_failed_deliveries_are_listed_apart(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    retrying = await a_retrying_delivery(tenant, session_factory, due_in=timedelta(minutes=5))
    failed = (await tenant.client.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
    await set_delivery(
        session_factory,
        failed,
        status="failed",
        attempts=16,
        last_status_code=503,
        last_error="the endpoint answered HTTP 503",
        next_attempt_at=None,
    )
    listed = {}
    for state in ("pending", "retrying", "failed"):
        page = await tenant.client.get("/api/v2/webhooks/deliveries", params={"status": state})
        assert page.status_code == 200, page.text
        listed[state] = page.json()["Items"]
    assert listed["pending"] == []
    [shown] = listed["retrying"]
    assert (shown["Id"], shown["Status"], shown["LastError"]) == (retrying, "retrying", "timeout")
    assert datetime.fromisoformat(shown["NextAttemptAt"]) > utcnow()
    assert [(d["Id"], d["NextAttemptAt"]) for d in listed["failed"]] == [(failed, None)]


async def test_a_delivery_is_shown_by_its_id(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    delivery = await a_retrying_delivery(tenant, session_factory, due_in=timedelta(minutes=5))
    response = await tenant.client.get(f"/api/v2/webhooks/deliveries/{delivery}")
    assert response.status_code == 200, response.text
    assert (response.json()["Id"], response.json()["Status"]) == (delivery, "retrying")
    missing = await tenant.client.get("/api/v2/webhooks/deliveries/whd_" + "0" * 32)
    assert (missing.status_code, missing.json()["Code"]) == (404, "WEBHOOK_DELIVERY_NOT_FOUND")


@pytest.fixture
def slow_delivery_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read of one delivery waits a little before answering, so parallel retries all
    read it before any of them writes unless the read holds the row."""
    get_by_id = DeliveryRepository.get_by_id

    async def slow_get_by_id(self: DeliveryRepository, delivery_id: str, **kwargs: Any) -> Any:
        delivery = await get_by_id(self, delivery_id, **kwargs)
        await asyncio.sleep(0.3)
        return delivery

    monkeypatch.setattr(DeliveryRepository, "get_by_id", slow_get_by_id)


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
@pytest.mark.usefixtures("slow_delivery_reads")
async def test_parallel_retries_of_a_failed_delivery_queue_it_once() -> None:
    async with isolated("retries", run_background_jobs=False) as env:
        api = env.client
        assert (await api.put(CONFIG, json={"WebhookUrl": "http://localhost:9/hooks"})).is_success
        delivery = (await api.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
        async with env.app.state.session_factory() as session:
            await session.execute(
                update(WebhookDelivery)
                .where(WebhookDelivery.id == delivery)
                .values(status="failed", attempts=16, next_attempt_at=None)
            )
            await session.commit()
        retry = f"/api/v2/webhooks/deliveries/{delivery}/retry"
        responses = await asyncio.gather(api.post(retry), api.post(retry))
        assert sorted(r.status_code for r in responses) == [202, 409], [r.text for r in responses]


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
@pytest.mark.usefixtures("slow_delivery_reads")
async def test_parallel_retries_of_a_retrying_delivery_queue_it_once() -> None:
    async with isolated("retries", run_background_jobs=False) as env:
        api = env.client
        assert (await api.put(CONFIG, json={"WebhookUrl": "http://localhost:9/hooks"})).is_success
        delivery = (await api.post("/api/v2/webhooks/test")).json()["DeliveryIds"][0]
        await set_delivery(
            env.app.state.session_factory,
            delivery,
            status="retrying",
            attempts=2,
            next_attempt_at=utcnow() + timedelta(hours=1),
        )
        retry = f"/api/v2/webhooks/deliveries/{delivery}/retry"
        responses = await asyncio.gather(api.post(retry), api.post(retry))
        assert sorted(r.status_code for r in responses) == [202, 409], [r.text for r in responses]


async def test_another_companys_events_and_deliveries_are_404(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    await with_endpoint(a)
    sent = (await a.client.post("/api/v2/webhooks/test")).json()
    assert (await b.client.get(f"/api/v2/events/{sent['EventId']}")).status_code == 404
    retry = await b.client.post(f"/api/v2/webhooks/deliveries/{sent['DeliveryIds'][0]}/retry")
    assert retry.status_code == 404
    assert (await b.client.get("/api/v2/events")).json()["Items"] == []
    assert (await b.client.get("/api/v2/webhooks/deliveries")).json()["Items"] == []


async def test_events_without_an_endpoint_have_no_delivery(tenant: Tenant) -> None:
    await tenant.client.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 5}
    )
    event = (await tenant.client.get("/api/v2/events")).json()["Items"][0]
    assert (await tenant.client.get(f"/api/v2/events/{event['Id']}")).json()["Deliveries"] == []


async def test_an_endpoint_set_in_the_session_receives_the_sessions_later_events(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    """The session keeps what it read of the endpoint; changing it there drops that."""
    async with session_factory() as session:
        before = await events.record(
            session, company_id=tenant.company_id, type_="test.before", domain="test", data={}
        )
        await companies.update_configuration(
            session,
            company_id=tenant.company_id,
            webhook_url="http://localhost:9/hooks",
            change_url=True,
            rotate_secret=False,
            allow_loopback=True,
        )
        after = await events.record(
            session, company_id=tenant.company_id, type_="test.after", domain="test", data={}
        )
        company_id = tenant.company_id
        assert await events.deliveries_of(session, company_id=company_id, event_id=before) == []
        assert len(await events.deliveries_of(session, company_id=company_id, event_id=after)) == 1
        await session.rollback()
