"""Sandbox simulations of payments: a payer pays a payment request."""

from __future__ import annotations

from fastapi import Request

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.payments.requests.schemas import (
    PaymentRequestIdPath,
    PaymentRequestResponse,
    SandboxRequestPayment,
)
from finplat.sandbox.payments import requests as sandbox_requests

router = api_router(tags=["Sandbox"])


@router.post(
    "/api/v2/sandbox/payments/requests/{requestId}/pay",
    response_model=PaymentRequestResponse,
    summary="A payer pays a payment request (sandbox)",
    description="The sandbox banking provider takes the payer's payment, in full (another "
    "`Amount` is refused with 400 `PROVIDER_PARTIAL_PAYMENT` and nothing moves), credits the "
    "budget and notifies the platform, which posts it to the ledger and marks the request "
    "`PAID`. A request that is not pending, or past its expiry, is 409 "
    "`PROVIDER_REQUEST_NOT_PAYABLE`.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_payment_request_pay(
    requestId: PaymentRequestIdPath,
    body: SandboxRequestPayment,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PaymentRequestResponse:
    paid = await sandbox_requests.pay(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        request_id=requestId,
        amount=body.Amount,
        payer_name=body.PayerName,
    )
    return PaymentRequestResponse.of(paid)
