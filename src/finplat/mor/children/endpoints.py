"""Parent company provisioning: child companies and their fundings."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request, status
from fastapi.responses import JSONResponse

from finplat.config import Settings
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import IdempotencyKeyHeader, RequestClaim, claim_request
from finplat.kit.money import (
    UnknownCurrency,
    exact_json_numbers,
    normalize_currency,
    requested_amount,
)
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.children import service
from finplat.mor.children.schemas import (
    MorChild,
    MorChildCreated,
    MorChildCreateRequest,
    MorChildFundingPage,
    MorChildFundingRequest,
    MorChildFundingResponse,
    MorChildPage,
)

router = mor_router(tags=["MOR"])

ChildIdPath = Annotated[
    int,
    Path(ge=1, le=MAX_ID, description="The child company's `Id`."),
    PARAMETER_ID,
]
NOT_YOURS = (
    "Another company's child, a sibling or the parent itself: 404 `CHILD_COMPANY_NOT_FOUND`, "
    "as an id that does not exist."
)


@router.post(
    f"{PREFIX}/children",
    response_model=MorChildCreated,
    status_code=status.HTTP_201_CREATED,
    summary="Create a child company",
    description="Creates a company of its own (a separate tenant, enabled for MOR, with the "
    "default tiers) whose parent is the caller. Its first API key and webhook secret are in "
    "this response only: a retry with the same `Idempotency-Key` answers the same child with "
    "both null. A child company cannot create children: 409 `MOR_CHILD_CANNOT_PROVISION`. "
    "Records `mor.child.created`.",
    responses=error_responses(400, 409),
)
async def mor_create_child(
    body: MorChildCreateRequest,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorChildCreated:
    await claim_request(request, session, principal, idempotency_key)
    settings: Settings = request.app.state.settings
    created = await service.create_child(
        session, parent_id=principal.company_id, name=body.Name, sandbox=settings.sandbox
    )
    child = MorChild.of(created.company).model_dump()
    await _keep_for_replay_without_secrets(
        request, session, MorChildCreated(**child, ApiKey=None, WebhookSecret=None)
    )
    return MorChildCreated(
        **child, ApiKey=created.key.api_key, WebhookSecret=created.webhook_secret
    )


async def _keep_for_replay_without_secrets(
    request: Request, session: DbSession, replay: MorChildCreated
) -> None:
    """Store the key's answer without the child's key and secret, in this transaction: they
    exist in the first response only, never at rest (the route would store it as sent)."""
    held: RequestClaim | None = getattr(request.state, "idempotency", None)
    if held is None:
        return
    rendered = JSONResponse(replay.model_dump(mode="json"), status_code=status.HTTP_201_CREATED)
    await idempotency.complete(
        session,
        held.claim,
        status=status.HTTP_201_CREATED,
        body=exact_json_numbers(bytes(rendered.body)),
        content_type="application/json",
    )
    request.state.idempotency = None


@router.get(
    f"{PREFIX}/children",
    response_model=MorChildPage,
    summary="List the caller's child companies",
    description="Newest first; only the caller's own children.",
    responses=error_responses(400),
)
async def mor_children(
    session: DbSession, principal: CurrentPrincipal, page: PageParams
) -> MorChildPage:
    found = await service.children(
        session, parent_id=principal.company_id, offset=page.offset, limit=page.page_size + 1
    )
    return MorChildPage(
        Items=[MorChild.of(c) for c in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )


@router.get(
    f"{PREFIX}/children/{{childId}}",
    response_model=MorChild,
    summary="Read a child company",
    description=NOT_YOURS,
    responses=error_responses(400, 404),
)
async def mor_child(
    childId: ChildIdPath, session: DbSession, principal: CurrentPrincipal
) -> MorChild:
    found = await service.child(session, parent_id=principal.company_id, child_id=childId)
    return MorChild.of(found)


@router.post(
    f"{PREFIX}/children/{{childId}}/fundings",
    response_model=MorChildFundingResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Fund a child company from the caller's wallet",
    description="Debits the caller's wallet (master account) in `Currency` and credits the "
    "child's, in one transaction. Without the available funds: 409 `INSUFFICIENT_FUNDS`, and "
    "nothing moves. Safe to retry with `Idempotency-Key`. Records `mor.child.funded` for the "
    "parent and `mor.funding.received` for the child. " + NOT_YOURS,
    responses=error_responses(400, 404, 409),
)
async def mor_fund_child(
    childId: ChildIdPath,
    body: MorChildFundingRequest,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorChildFundingResponse:
    try:
        currency = normalize_currency(body.Currency)
    except UnknownCurrency as exc:
        raise ValidationFailed(validation_errors={"Currency": [str(exc)]}) from None
    money = requested_amount(body.Amount, currency)
    await claim_request(request, session, principal, idempotency_key)
    funding = await service.fund_child(
        session, parent_id=principal.company_id, child_id=childId, money=money
    )
    return MorChildFundingResponse.of(funding)


@router.get(
    f"{PREFIX}/children/{{childId}}/fundings",
    response_model=MorChildFundingPage,
    summary="List the caller's fundings of a child company",
    description="Newest first. " + NOT_YOURS,
    responses=error_responses(400, 404),
)
async def mor_child_fundings(
    childId: ChildIdPath, session: DbSession, principal: CurrentPrincipal, page: PageParams
) -> MorChildFundingPage:
    found = await service.fundings(
        session,
        parent_id=principal.company_id,
        child_id=childId,
        offset=page.offset,
        limit=page.page_size + 1,
    )
    return MorChildFundingPage(
        Items=[MorChildFundingResponse.of(f) for f in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )
