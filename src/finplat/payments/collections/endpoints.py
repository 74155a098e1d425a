"""Collections against a mandate: create, read."""

from __future__ import annotations

from fastapi import Request, status

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.payments.collections import service
from finplat.payments.collections.schemas import (
    CollectionCreate,
    CollectionIdPath,
    CollectionResponse,
)

router = api_router(tags=["Payments"])


@router.post(
    "/api/v2/payments/collections",
    response_model=CollectionResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Collect under a mandate",
    description="Takes `Amount` from the mandate's budget into the company's master account. "
    "The mandate must be `ACTIVE` and started, in `Currency` (409 `MANDATE_NOT_ACTIVE`, "
    "`MANDATE_CANCELLED`, `MANDATE_EXPIRED`, `MANDATE_NOT_STARTED`, "
    "`MANDATE_CURRENCY_MISMATCH`); the amount must fit `MaxAmount` and what is left of the "
    "period's allowance (409 `MANDATE_MAX_AMOUNT_EXCEEDED`, `MANDATE_ALLOWANCE_EXCEEDED`); a "
    "one-time mandate permits one outstanding or completed collection (409 "
    "`MANDATE_ALREADY_USED`). A budget that cannot pay gives a `FAILED` collection "
    "(`INSUFFICIENT_FUNDS`). While the provider has not decided, or its answer was lost, the "
    "collection stays `PENDING` and keeps its money and allowance reserved. Retrying with the "
    "same `merchantReferenceId` and terms answers the same collection; other terms are 400 "
    "`REFERENCE_REUSED_WITH_DIFFERENT_TERMS`.",
    responses=error_responses(400, 404, 409, 503),
)
async def collections_create(
    body: CollectionCreate,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CollectionResponse:
    await claim_request(request, session, principal, idempotency_key)
    collected = await service.collect(
        session,
        providers,
        company_id=principal.company_id,
        mandate_id=body.MandateId,
        money=requested_amount(body.Amount, str(body.Currency)),
        merchant_reference_id=body.merchantReferenceId,
    )
    return CollectionResponse.of(collected)


@router.get(
    "/api/v2/payments/collections/{collectionId}",
    response_model=CollectionResponse,
    summary="A collection, refreshed from the provider while pending",
    description="While `PENDING` the banking provider is asked first; if it cannot answer, "
    "the last known state is returned. Another company's collection is 404.",
    responses=error_responses(400, 404),
)
async def collections_get(
    collectionId: CollectionIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CollectionResponse:
    collected = await service.refreshed(
        session, providers, company_id=principal.company_id, collection_id=collectionId
    )
    return CollectionResponse.of(collected)
