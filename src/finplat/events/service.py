"""Events: recorded in the outbox with the change they report, delivered by the worker.

Rules: an event is written in the same transaction as the change (so it exists if and only if
the change committed); a delivery row is created for the company's endpoint at the same time;
the envelope bytes are fixed at creation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import repository as companies
from finplat.errors import Conflict, NotFound
from finplat.events import envelope, repository
from finplat.events.models import Event, WebhookDelivery
from finplat.events.repository import DeliveryRepository, EventRepository
from finplat.kit.clock import utcnow
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page

TEST_EVENT_TYPE = "webhook.test"
_ENDPOINTS = "finplat.events.endpoints"  # session.info: each company's `_Endpoint`


class EventNotFound(NotFound):
    code = "EVENT_NOT_FOUND"
    message = "No event with that id."


class DeliveryNotFound(NotFound):
    code = "WEBHOOK_DELIVERY_NOT_FOUND"
    message = "No webhook delivery with that id."


class WebhookEndpointNotConfigured(Conflict):
    code = "WEBHOOK_ENDPOINT_NOT_CONFIGURED"
    message = "Configure a webhook URL first (PUT /api/v2/company/configuration)."


class DeliveryNotRetryable(Conflict):
    code = "WEBHOOK_DELIVERY_NOT_RETRYABLE"
    message = (
        "Only a failed, disabled or retrying delivery can be retried; this one succeeded or "
        "is already due for an attempt now."
    )


async def record(
    session: AsyncSession,
    *,
    company_id: int,
    type_: str,
    domain: str,
    data: dict[str, Any],
    provider: str = envelope.PLATFORM_PROVIDER,
) -> str:
    """Write an event (and its delivery, if the company has an endpoint) in this transaction;
    returns its id. The session is flushed first, so the event follows the changes it reports
    in the transaction's order, as when it was an object of the session."""
    now = utcnow()
    event_id = envelope.new_event_id()
    body = envelope.render(
        event_id=event_id, type_=type_, domain=domain, provider=provider, created_at=now, data=data
    )
    await session.flush()
    await EventRepository(session, company_id).insert(
        {
            "id": event_id,
            "type": type_,
            "domain": domain,
            "provider": provider,
            "body": body,
            "created_at": now,
        }
    )
    endpoint = await _endpoint_of(session, company_id)
    if endpoint is not None:
        disabled = endpoint.disabled
        await DeliveryRepository(session, company_id).insert(
            {
                "id": envelope.new_delivery_id(),
                "event_id": event_id,
                "status": repository.ENDPOINT_DISABLED if disabled else repository.PENDING,
                "attempts": 0,
                "next_attempt_at": None if disabled else now,
                "created_at": now,
            }
        )
    return event_id


@dataclass(frozen=True, slots=True)
class _Endpoint:
    disabled: bool


async def _endpoint_of(session: AsyncSession, company_id: int) -> _Endpoint | None:
    """Whether the company has a webhook endpoint (None: no deliveries) and whether it is
    disabled, read once per session: a request that records several events (created, then
    completed) reads the company once. The session's identity map alone would not do: it
    holds its objects weakly. Kept as values, which a rollback does not expire."""
    kept: dict[int, _Endpoint | None] = session.info.setdefault(_ENDPOINTS, {})
    if company_id not in kept:
        company = await companies.get(session, company_id)
        endpoint = None
        if company is not None and company.webhook_url:
            endpoint = _Endpoint(company.webhook_disabled_at is not None)
        kept[company_id] = endpoint
    return kept[company_id]


def forget_endpoint(session: AsyncSession, company_id: int) -> None:
    """Drop what the session keeps of the company's endpoint (`_endpoint_of`): call after
    changing its webhook URL or its disabling, so a later event in the session sees it."""
    kept: dict[int, _Endpoint | None] = session.info.get(_ENDPOINTS, {})
    kept.pop(company_id, None)


async def get_event(session: AsyncSession, *, company_id: int, event_id: str) -> Event:
    event = await EventRepository(session, company_id).get_by_id(event_id)
    if event is None:
        raise EventNotFound()
    return event


async def list_events(
    session: AsyncSession, *, company_id: int, page: PageRequest, event_type: str | None
) -> PageSlice[Event]:
    stmt = EventRepository(session, company_id).listing(event_type=event_type)
    return await fetch_page(session, stmt, page)


async def deliveries_of(
    session: AsyncSession, *, company_id: int, event_id: str
) -> list[WebhookDelivery]:
    return await DeliveryRepository(session, company_id).for_event(event_id)


async def list_deliveries(
    session: AsyncSession,
    *,
    company_id: int,
    page: PageRequest,
    status: str | None,
    event_id: str | None,
) -> PageSlice[WebhookDelivery]:
    stmt = DeliveryRepository(session, company_id).listing(status=status, event_id=event_id)
    return await fetch_page(session, stmt, page)


async def get_delivery(
    session: AsyncSession, *, company_id: int, delivery_id: str, lock: bool = False
) -> WebhookDelivery:
    delivery = await DeliveryRepository(session, company_id).get_by_id(delivery_id, lock=lock)
    if delivery is None:
        raise DeliveryNotFound()
    return delivery


async def retry_delivery(
    session: AsyncSession, *, company_id: int, delivery_id: str
) -> WebhookDelivery:
    """Send a delivery now; the webhook id and the body bytes stay the same.

    A failed or disabled delivery is queued again with a fresh attempt budget. A retrying one
    is made due now and keeps its attempt count, so the schedule continues from there if this
    attempt fails too. A delivery that succeeded, or is already due (new, just queued, or being
    sent), is 409. The delivery is read under its lock: of parallel retries one queues it and
    the others find it due (409)."""
    delivery = await get_delivery(
        session, company_id=company_id, delivery_id=delivery_id, lock=True
    )
    await _require_endpoint(session, company_id)
    now = utcnow()
    if delivery.status in (repository.FAILED, repository.ENDPOINT_DISABLED):
        delivery.status = repository.PENDING
        delivery.attempts = 0
    elif not (
        delivery.status == repository.RETRYING
        and delivery.next_attempt_at is not None
        and delivery.next_attempt_at > now
    ):
        raise DeliveryNotRetryable()
    delivery.next_attempt_at = now
    await session.flush()
    return delivery


async def send_test_event(session: AsyncSession, *, company_id: int) -> Event:
    """Record a `webhook.test` event for the configured endpoint."""
    await _require_endpoint(session, company_id)
    event_id = await record(
        session,
        company_id=company_id,
        type_=TEST_EVENT_TYPE,
        domain="webhook",
        data={"message": "This is a test event from finplat."},
    )
    return await get_event(session, company_id=company_id, event_id=event_id)


async def _require_endpoint(session: AsyncSession, company_id: int) -> None:
    company = await companies.get(session, company_id)
    if company is None or not company.webhook_url or company.webhook_disabled_at is not None:
        raise WebhookEndpointNotConfigured()
