"""Mandates: create, list, read, cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, status

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID
from finplat.payments.mandates import service
from finplat.payments.mandates.models import PaymentMandate
from finplat.payments.mandates.schemas import (
    MandateCreate,
    MandateIdPath,
    MandatePage,
    MandateResponse,
    MandateStatusQuery,
)

router = api_router(tags=["Payments"])

OptionalUserQuery = Annotated[
    int | None,
    Query(ge=1, le=MAX_ID, description="The user (or `UserId` in the body)."),
    PARAMETER_ID,
]


async def respond(session: DbSession, mandate: PaymentMandate) -> MandateResponse:
    return MandateResponse.of(mandate, await service.remaining_this_period(session, mandate))


@router.post(
    "/api/v2/payments/mandates",
    response_model=MandateResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a mandate",
    description="The user authorises the company to collect from a budget (`BudgetId`, "
    "default: the user's default budget, which must hold `Currency`) at most `MaxAmount` per "
    "period of `Frequency`. The mandate is `PENDING` until the banking provider reports the "
    "account holder's authorisation (`ACTIVE`, event `mandate.activated`) or refusal "
    "(`FAILED`). Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def mandates_create(
    body: MandateCreate,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MandateResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    mandate = await service.create(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=body.UserId,
        max_amount=requested_amount(body.MaxAmount, str(body.Currency), field="MaxAmount"),
        frequency=body.Frequency,
        description=body.Description,
        external_reference_id=body.ExternalReferenceId,
        start_date=body.StartDate,
        end_date=body.EndDate,
        budget_id=body.BudgetId,
    )
    return await respond(session, mandate)


@router.get(
    "/api/v2/payments/mandates",
    response_model=MandatePage,
    summary="List mandates",
    description="The company's mandates, newest first; `userId` and `status` narrow the list.",
    responses=error_responses(400, 404),
)
async def mandates_list(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    userId: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only this user's mandates."), PARAMETER_ID
    ] = None,
    status_: MandateStatusQuery = None,
) -> MandatePage:
    found = await service.page(
        session,
        company_id=principal.company_id,
        page_request=page,
        user_id=userId,
        status=status_,
    )
    items = [await respond(session, mandate) for mandate in found.rows]
    return MandatePage(Items=items, Page=page.page, PageSize=page.page_size, HasMore=found.has_more)


@router.get(
    "/api/v2/payments/mandates/{mandateId}",
    response_model=MandateResponse,
    summary="A mandate",
    description="With `RemainingThisPeriod`, what the current period still allows. Another "
    "company's mandate is 404, as one that does not exist.",
    responses=error_responses(400, 404, 500),
)
async def mandates_get(
    mandateId: MandateIdPath, session: DbSession, principal: CurrentPrincipal
) -> MandateResponse:
    mandate = await service.get(session, company_id=principal.company_id, mandate_id=mandateId)
    return await respond(session, mandate)


@router.post(
    "/api/v2/payments/mandates/{mandateId}/cancel",
    response_model=MandateResponse,
    summary="Cancel a mandate",
    description="A `PENDING` or `ACTIVE` mandate is cancelled at the banking provider, then "
    "here (event `mandate.cancelled`); no collection is accepted afterwards. Collections "
    "already pending settle as the provider decides. Any other status is 409 "
    "`MANDATE_NOT_CANCELLABLE`.",
    responses=error_responses(400, 404, 409, 503),
)
async def mandates_cancel(
    mandateId: MandateIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MandateResponse:
    mandate = await service.cancel(
        session, providers, company_id=principal.company_id, mandate_id=mandateId
    )
    return await respond(session, mandate)
