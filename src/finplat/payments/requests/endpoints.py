"""Payment requests: create, list, read, cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, status

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, UserIdQuery
from finplat.payments.requests import service
from finplat.payments.requests.schemas import (
    BudgetIdQuery,
    PaymentRequestCreate,
    PaymentRequestIdPath,
    PaymentRequestPage,
    PaymentRequestResponse,
    StatusQuery,
)

router = api_router(tags=["Payments"])

OptionalUserQuery = Annotated[
    int | None,
    Query(ge=1, le=MAX_ID, description="Only this user's requests."),
    PARAMETER_ID,
]


@router.post(
    "/api/v2/payments/requests",
    response_model=PaymentRequestResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Ask to be paid (payment request)",
    description="The user asks to be paid `Amount` of `Currency` into `BudgetId` (default: the "
    "user's default budget, which must hold the currency: 409 `CURRENCY_NOT_IN_BUDGET`). The "
    "request is issued at the banking provider and is `PENDING` until a payer pays it in "
    "full (`PAID`: the money is in the budget), it is cancelled, or `ExpiresAt` passes "
    "(`EXPIRED`; default 7 days, at most 90). Events `payment_request.created`, `.paid`, "
    "`.cancelled`, `.expired`. Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def payment_requests_create(
    body: PaymentRequestCreate,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> PaymentRequestResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    created = await service.create(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=userId,
        money=requested_amount(body.Amount, str(body.Currency)),
        description=body.Description,
        budget_id=body.BudgetId,
        expires_at=body.ExpiresAt,
    )
    return PaymentRequestResponse.of(created)


@router.get(
    "/api/v2/payments/requests",
    response_model=PaymentRequestPage,
    summary="List payment requests",
    description="The company's payment requests, newest first; `userId`, `status` and "
    "`budgetId` narrow the list. A request past its expiry is listed `EXPIRED`.",
    responses=error_responses(400, 404),
)
async def payment_requests_list(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    userId: OptionalUserQuery = None,
    status_: StatusQuery = None,
    budgetId: BudgetIdQuery = None,
) -> PaymentRequestPage:
    found = await service.page(
        session,
        company_id=principal.company_id,
        page_request=page,
        user_id=userId,
        status=status_,
        budget_id=budgetId,
    )
    return PaymentRequestPage.of(found, page, PaymentRequestResponse.of)


@router.get(
    "/api/v2/payments/requests/{requestId}",
    response_model=PaymentRequestResponse,
    summary="A payment request",
    description="Another company's request is 404, as one that does not exist.",
    responses=error_responses(400, 404),
)
async def payment_requests_get(
    requestId: PaymentRequestIdPath, session: DbSession, principal: CurrentPrincipal
) -> PaymentRequestResponse:
    found = await service.get(session, company_id=principal.company_id, request_id=requestId)
    return PaymentRequestResponse.of(found)


@router.post(
    "/api/v2/payments/requests/{requestId}/cancel",
    response_model=PaymentRequestResponse,
    summary="Cancel a payment request",
    description="Only a `PENDING` request can be cancelled (409 "
    "`PAYMENT_REQUEST_NOT_PENDING` otherwise, also when the payer paid it a moment before). "
    "The banking provider stops it first, so it can no longer be paid.",
    responses=error_responses(400, 404, 409, 503),
)
async def payment_requests_cancel(
    requestId: PaymentRequestIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PaymentRequestResponse:
    cancelled = await service.cancel(
        session, providers, company_id=principal.company_id, request_id=requestId
    )
    return PaymentRequestResponse.of(cancelled)
