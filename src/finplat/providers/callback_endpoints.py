"""The inbound webhook endpoint real providers call (the sandbox uses the same path in-process)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Request
from pydantic import BaseModel

from finplat.config import Settings
from finplat.errors import ServiceUnavailable, error_responses
from finplat.indexed_router import IndexedRouter
from finplat.providers import inbound
from finplat.providers.names import ExternalProvider

router = IndexedRouter(tags=["Provider callbacks"])


class CallbackReceipt(BaseModel):
    Received: bool
    EventId: str
    Duplicate: bool


@router.post(
    "/providers/{provider}/callbacks",
    response_model=CallbackReceipt,
    summary="Receive a provider callback",
    description="For providers, not partners. The body is `{id, type, companyId, createdAt, "
    "data}`; `X-Provider-Signature` is the hex HMAC-SHA256 of the exact body with the "
    "provider callback secret (401 when it does not match). Each event id is processed "
    "once; a repeat is acknowledged with `Duplicate` true. A body the platform cannot read "
    "or store is 400 `MALFORMED_CALLBACK` (with `ValidationErrors`); one that contradicts "
    "what was already received (a `payment.received` repeating a `paymentId` with another "
    "amount or currency) is 409 `INCOMING_PAYMENT_CONFLICT`, and one that comes before what "
    "it refers to is recorded (an `applicant.reviewed` for an applicant whose KYC start is "
    "still being recorded) is 409 `KYC_REVIEW_BEFORE_START`. None is recorded, so the "
    "provider's retry is processed.",
    responses=error_responses(400, 401, 409, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def receive_callback(
    provider: ExternalProvider,
    request: Request,
    signature: Annotated[str | None, Header(alias=inbound.SIGNATURE_HEADER)] = None,
) -> CallbackReceipt:
    settings: Settings = request.app.state.settings
    if not settings.provider_callback_secret:
        raise ServiceUnavailable(
            "Provider callbacks are not configured: set FINPLAT_PROVIDER_CALLBACK_SECRET.",
            code="PROVIDER_CALLBACKS_NOT_CONFIGURED",
        )
    receipt = await inbound.receive(
        request.app.state.session_factory,
        provider=provider,
        body=await request.body(),
        signature=signature,
        secret=settings.provider_callback_secret,
    )
    return CallbackReceipt(Received=True, EventId=receipt.event_id, Duplicate=receipt.duplicate)
