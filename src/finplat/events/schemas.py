from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, cast

from pydantic import Field, PlainSerializer

from finplat.events import envelope
from finplat.events.models import Event, WebhookDelivery
from finplat.kit.money import amount_for_json
from finplat.kit.pagination import Page
from finplat.kit.schemas import ResponseModel


def _exact_amounts(value: Any) -> Any:
    if isinstance(value, Decimal):
        return amount_for_json(value)
    if isinstance(value, dict):
        return {k: _exact_amounts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact_amounts(v) for v in value]
    return value


DeliveryStatus = Literal["pending", "retrying", "succeeded", "failed", "endpoint_disabled"]
DELIVERY_STATES = (
    "`pending`: queued and not attempted yet (a new delivery, or a failed one retried by "
    "hand); `retrying`: an attempt failed (`LastStatusCode` or `LastError` say why) and the "
    "next one is scheduled for `NextAttemptAt`; `succeeded`: the endpoint answered 2xx "
    "(`DeliveredAt`); `failed`: given up, after a permanent failure (a 4xx other than 408, "
    "410 and 429) or when the last of the 16 attempts failed; `endpoint_disabled`: parked "
    "because the endpoint answered 410 Gone and is disabled until a URL is configured again."
)


class DeliveryResponse(ResponseModel):
    Id: str = Field(description="Stable across attempts: `X-Service-Webhook-Id` / `webhook-id`.")
    EventId: str
    Status: DeliveryStatus = Field(description=DELIVERY_STATES)
    Attempts: int = Field(description="Attempts made since the delivery was (re)queued.")
    NextAttemptAt: datetime | None = Field(
        description="When the next attempt is due (`pending` and `retrying` only)."
    )
    LastStatusCode: int | None = Field(
        description="The HTTP status of the last attempt (null when it got no answer)."
    )
    LastError: str | None = Field(
        description="Why the last attempt did not deliver: the status the endpoint answered, "
        "a timeout, a network error or an address refused. Null until an attempt fails and "
        "after a 2xx."
    )
    LastAttemptAt: datetime | None
    DeliveredAt: datetime | None
    CreatedAt: datetime

    @classmethod
    def of(cls, delivery: WebhookDelivery) -> DeliveryResponse:
        return cls(
            Id=delivery.id,
            EventId=delivery.event_id,
            Status=cast(DeliveryStatus, delivery.status),
            Attempts=delivery.attempts,
            NextAttemptAt=delivery.next_attempt_at,
            LastStatusCode=delivery.last_status_code,
            LastError=delivery.last_error,
            LastAttemptAt=delivery.last_attempt_at,
            DeliveredAt=delivery.delivered_at,
            CreatedAt=delivery.created_at,
        )


class EventResponse(ResponseModel):
    Id: str
    Type: str
    Domain: str
    Provider: str
    Timestamp: datetime
    Data: Annotated[dict[str, Any], PlainSerializer(_exact_amounts, when_used="json")] = Field(
        description="The event's `data`, as in the webhook envelope."
    )
    Deliveries: list[DeliveryResponse] | None = Field(
        default=None, description="Only on the single-event endpoint."
    )

    @classmethod
    def of(cls, event: Event, deliveries: list[WebhookDelivery] | None = None) -> EventResponse:
        return cls(
            Id=event.id,
            Type=event.type,
            Domain=event.domain,
            Provider=event.provider,
            Timestamp=event.created_at,
            Data=envelope.data_of(event.body),
            Deliveries=[DeliveryResponse.of(d) for d in deliveries]
            if deliveries is not None
            else None,
        )


class EventPage(Page[EventResponse]):
    """A page of events, newest first."""


class DeliveryPage(Page[DeliveryResponse]):
    """A page of webhook deliveries, newest first."""


class TestEventResponse(ResponseModel):
    EventId: str
    DeliveryIds: list[str]
