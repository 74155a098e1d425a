from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, status

from finplat.errors import error_responses
from finplat.events import service
from finplat.events.schemas import (
    DELIVERY_STATES,
    DeliveryPage,
    DeliveryResponse,
    DeliveryStatus,
    EventPage,
    EventResponse,
    TestEventResponse,
)
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.pagination import PageParams

router = api_router(tags=["Events and webhooks"])

EVENT_ID_PATTERN = r"^evt_[0-9a-f]{32}$"
EVENT_TYPE_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$"
DELIVERY_ID_PATTERN = r"^whd_[0-9a-f]{32}$"
EventIdPath = Annotated[str, Path(pattern=EVENT_ID_PATTERN, description="The event's `Id`.")]
DeliveryIdPath = Annotated[
    str, Path(pattern=DELIVERY_ID_PATTERN, description="The delivery's `Id`.")
]


@router.get(
    "/api/v2/events",
    response_model=EventPage,
    summary="List events",
    responses=error_responses(400),
)
async def list_events(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    type: Annotated[
        str | None,
        Query(max_length=100, pattern=EVENT_TYPE_PATTERN, description="e.g. `company.funded`"),
    ] = None,
) -> EventPage:
    result = await service.list_events(
        session, company_id=principal.company_id, page=page, event_type=type
    )
    return EventPage.of(result, page, EventResponse.of)


@router.get(
    "/api/v2/events/{eventId}",
    response_model=EventResponse,
    summary="Get an event with its deliveries",
    responses=error_responses(400, 404),
)
async def get_event(
    eventId: EventIdPath, session: DbSession, principal: CurrentPrincipal
) -> EventResponse:
    event = await service.get_event(session, company_id=principal.company_id, event_id=eventId)
    deliveries = await service.deliveries_of(
        session, company_id=principal.company_id, event_id=eventId
    )
    return EventResponse.of(event, deliveries)


@router.get(
    "/api/v2/webhooks/deliveries",
    response_model=DeliveryPage,
    summary="List webhook deliveries",
    responses=error_responses(400),
)
async def list_deliveries(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    status_: Annotated[
        DeliveryStatus | None,
        Query(alias="status", description="Only deliveries in this state. " + DELIVERY_STATES),
    ] = None,
    eventId: Annotated[str | None, Query(pattern=EVENT_ID_PATTERN)] = None,
) -> DeliveryPage:
    result = await service.list_deliveries(
        session, company_id=principal.company_id, page=page, status=status_, event_id=eventId
    )
    return DeliveryPage.of(result, page, DeliveryResponse.of)


@router.get(
    "/api/v2/webhooks/deliveries/{deliveryId}",
    response_model=DeliveryResponse,
    summary="Get a webhook delivery",
    description="One delivery by its `Id` (the `X-Service-Webhook-Id` of its attempts).",
    responses=error_responses(400, 404),
)
async def get_delivery(
    deliveryId: DeliveryIdPath, session: DbSession, principal: CurrentPrincipal
) -> DeliveryResponse:
    delivery = await service.get_delivery(
        session, company_id=principal.company_id, delivery_id=deliveryId
    )
    return DeliveryResponse.of(delivery)


@router.post(
    "/api/v2/webhooks/deliveries/{deliveryId}/retry",
    response_model=DeliveryResponse,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Send a delivery now",
    description="A `failed` or `endpoint_disabled` delivery is queued for an immediate attempt "
    "with a fresh attempt budget (`pending`, `Attempts` 0). A `retrying` delivery is made due "
    "now instead of at `NextAttemptAt` and keeps its attempt count (if this attempt fails "
    "too, the schedule continues). Either way the next worker pass sends it, with the same "
    "webhook id and body. 409 `WEBHOOK_DELIVERY_NOT_RETRYABLE` for a delivery that succeeded "
    "or is already due (`pending`, or a `retrying` one already queued or being sent); 409 "
    "`WEBHOOK_ENDPOINT_NOT_CONFIGURED` while no enabled endpoint is configured.",
    responses=error_responses(400, 404, 409),
)
async def retry_delivery(
    deliveryId: DeliveryIdPath, session: DbSession, principal: CurrentPrincipal
) -> DeliveryResponse:
    delivery = await service.retry_delivery(
        session, company_id=principal.company_id, delivery_id=deliveryId
    )
    return DeliveryResponse.of(delivery)


@router.post(
    "/api/v2/webhooks/test",
    response_model=TestEventResponse,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Send a webhook.test event",
    responses=error_responses(409),
)
async def send_test_event(session: DbSession, principal: CurrentPrincipal) -> TestEventResponse:
    event = await service.send_test_event(session, company_id=principal.company_id)
    deliveries = await service.deliveries_of(
        session, company_id=principal.company_id, event_id=event.id
    )
    return TestEventResponse(EventId=event.id, DeliveryIds=[d.id for d in deliveries])
