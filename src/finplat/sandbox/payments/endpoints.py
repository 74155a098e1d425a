"""Sandbox simulations of payments: a payer pays a payment request, the account holder
decides a mandate, a pending collection settles."""

from __future__ import annotations

from fastapi import Request

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.payments.collections.schemas import (
    CollectionIdPath,
    CollectionResponse,
    SandboxCollectionSettlement,
)
from finplat.payments.mandates import service as mandates
from finplat.payments.mandates.schemas import MandateIdPath, MandateResponse, SandboxMandateDecision
from finplat.payments.requests.schemas import (
    PaymentRequestIdPath,
    PaymentRequestResponse,
    SandboxRequestPayment,
)
from finplat.providers.banking.port import CollectionFailure, ProviderCollectionStatus
from finplat.sandbox.payments import mandates as sandbox_mandates
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


@router.post(
    "/api/v2/sandbox/payments/mandates/{mandateId}/authorisation",
    response_model=MandateResponse,
    summary="The account holder decides a mandate (sandbox)",
    description="`APPROVED` activates a `PENDING` mandate (event `mandate.activated`); "
    "`REFUSED` fails it (`mandate.failed`). The decision reaches the platform as the banking "
    "provider's callback. A mandate no longer pending is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_mandate_authorisation(
    mandateId: MandateIdPath,
    body: SandboxMandateDecision,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MandateResponse:
    mandate = await sandbox_mandates.decide(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        mandate_id=mandateId,
        approve=body.Outcome == "APPROVED",
    )
    remaining = await mandates.remaining_this_period(session, mandate)
    return MandateResponse.of(mandate, remaining)


@router.post(
    "/api/v2/sandbox/payments/collections/{collectionId}/settlement",
    response_model=CollectionResponse,
    summary="Settle a pending collection (sandbox)",
    description="The banking provider decides a collection it left pending (the `pending` "
    "fault on `collect`): `COMPLETED` moves the money (or fails it `INSUFFICIENT_FUNDS` when "
    "the budget cannot pay), `FAILED` with `Reason`. Reaches the platform as the provider's "
    "callback. A collection no longer pending at the provider is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_collection_settlement(
    collectionId: CollectionIdPath,
    body: SandboxCollectionSettlement,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CollectionResponse:
    collected = await sandbox_mandates.settle_collection(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        collection_id=collectionId,
        status=ProviderCollectionStatus(body.Status),
        reason=CollectionFailure(body.Reason) if body.Reason else None,
    )
    return CollectionResponse.of(collected)
