"""The inbound webhook endpoint real providers call (the sandbox uses the same path in-process)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import Request
from pydantic import BaseModel

from finplat.config import Settings
from finplat.errors import ServiceUnavailable, error_responses
from finplat.http.indexed_router import IndexedRouter
from finplat.providers import inbound
from finplat.providers.names import ExternalProvider

router = IndexedRouter(tags=["Provider callbacks"])


class CallbacksNotConfigured(ServiceUnavailable):
    code = "PROVIDER_CALLBACKS_NOT_CONFIGURED"
    message = "Provider callbacks are not configured: set FINPLAT_PROVIDER_CALLBACK_SECRET."


class CallbackReceipt(BaseModel):
    Received: bool
    EventId: str
    Duplicate: bool


@router.post(
    "/providers/{provider}/callbacks",
    response_model=CallbackReceipt,
    summary="Receive a provider callback",
    description="For providers, not partners. The body is `{id, type, companyId, createdAt, "
    "data}`. `X-Provider-Timestamp` is the Unix time in whole seconds the callback was "
    "signed at, and `X-Provider-Signature` the lowercase hex HMAC-SHA256, keyed by the "
    "provider callback secret, of the timestamp header's exact value, a `.` and the exact "
    "body (`hex(HMAC(secret, timestamp + '.' + body))`). A missing or malformed timestamp is "
    "401 `INVALID_CALLBACK_TIMESTAMP`, a signature that does not match 401 "
    "`INVALID_CALLBACK_SIGNATURE`, and a timestamp more than "
    "`FINPLAT_PROVIDER_CALLBACK_TOLERANCE_SECONDS` (300 by default) from the platform's "
    "clock, either way, 401 `CALLBACK_TIMESTAMP_OUT_OF_TOLERANCE`. Each event id is processed "
    "once; a repeat is acknowledged with `Duplicate` true. A body the platform cannot read "
    "or store is 400 `MALFORMED_CALLBACK` (with `ValidationErrors`); one that contradicts "
    "what was already received (a `payment.received` repeating a `paymentId` with another "
    "amount or currency) is 409 `INCOMING_PAYMENT_CONFLICT`, and one that comes before what "
    "it refers to is recorded (an `applicant.reviewed` for an applicant whose KYC start is "
    "still being recorded) is 409 `KYC_REVIEW_BEFORE_START`. None is recorded, so the "
    "provider's retry is processed.",
    responses=error_responses(400, 401, 409, 503),
    openapi_extra={
        "parameters": inbound.SIGNED_HEADERS_OPENAPI,
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
)
async def receive_callback(
    provider: ExternalProvider,
    request: Request,
) -> CallbackReceipt:
    settings: Settings = request.app.state.settings
    signature, timestamp = inbound.signed_headers(request.headers)
    if not settings.provider_callback_secret:
        raise CallbacksNotConfigured()
    receipt = await inbound.receive(
        request.app.state.session_factory,
        provider=provider,
        body=await request.body(),
        signature=signature,
        timestamp=timestamp,
        secret=settings.provider_callback_secret,
        tolerance=timedelta(seconds=settings.provider_callback_tolerance_seconds),
    )
    return CallbackReceipt(Received=True, EventId=receipt.event_id, Duplicate=receipt.duplicate)
