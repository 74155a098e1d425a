"""Sandbox simulations of the banking provider's payments: a payout or a whole payment batch
moves on, or a batch's FX order is cancelled. Each change reaches the platform as the
provider's callback, delivered at once; the response shows the payouts after it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request

from finplat.banking.payouts.schemas import (
    PaymentBatchResponse,
    PayoutIdPath,
    PayoutResponse,
    SandboxBatchStatusChange,
    SandboxPayoutStatusChange,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.sandbox.banking import payouts as sandbox

router = api_router(tags=["Sandbox"])

BatchIdPath = Annotated[
    str,
    Path(
        pattern=r"^bp_bat_[0-9a-f]{24}$",
        description="The `PaymentBatchId` a payout reported.",
    ),
]


@router.post(
    "/api/v2/sandbox/banking/payouts/{payoutId}/status",
    response_model=PayoutResponse,
    summary="Move a payout's payment on (sandbox)",
    description="The sandbox banking provider moves the payout's payment to `Status` "
    "(`PROCESSING`, `COMPLETED`, or `FAILED`, which refunds the budget) and notifies the "
    "platform. A payout the provider never received, or already final, is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_payout_status(
    payoutId: PayoutIdPath,
    body: SandboxPayoutStatusChange,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PayoutResponse:
    tx = await sandbox.advance_payout(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        payout_id=payoutId,
        status=str(body.Status),
    )
    return PayoutResponse.of(tx)


@router.post(
    "/api/v2/sandbox/banking/payment-batches/{batchId}/status",
    response_model=PaymentBatchResponse,
    summary="Move a payment batch on (sandbox)",
    description="`PROCESSING` (the platform records `paymentbatch.processing`), `COMPLETED` "
    "(its payouts complete) or `CANCELLED` (its payouts fail and the money returns to the "
    "budget). A batch already final is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_payment_batch_status(
    batchId: BatchIdPath,
    body: SandboxBatchStatusChange,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PaymentBatchResponse:
    return await sandbox.advance_batch(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        batch_id=batchId,
        status=str(body.Status),
    )


@router.post(
    "/api/v2/sandbox/banking/payment-batches/{batchId}/order/cancel",
    response_model=PaymentBatchResponse,
    summary="Cancel a payment batch's FX order (sandbox)",
    description="Only for a batch whose payouts convert currencies, before it completes (409 "
    "otherwise): the order is cancelled, its payouts fail, the money returns to the budget "
    "and the platform records `paymentbatchorder.cancelled`.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_payment_batch_order_cancel(
    batchId: BatchIdPath,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PaymentBatchResponse:
    return await sandbox.cancel_batch_order(
        session,
        providers,
        request.app.state.session_factory,
        secret=request.app.state.settings.provider_callback_secret,
        company_id=principal.company_id,
        batch_id=batchId,
    )
