"""Discount codes on cards (platform administration routes)."""

from __future__ import annotations

from fastapi import Request

from finplat.cards.discounts import service
from finplat.cards.discounts.schemas import (
    CardDiscountResponse,
    DiscountCodeCreate,
    DiscountCodeResponse,
    DiscountCodeUpdate,
)
from finplat.cards.schemas import CardIdPath
from finplat.errors import error_responses
from finplat.http import path_ids  # noqa: F401 - registers the {name:id} convertor
from finplat.http.admin_routing import (
    CompanyIdQuery,
    CurrentAdmin,
    admin_router,
    claim_admin_request,
    target_company,
)
from finplat.http.routing import DbSession
from finplat.idempotency.http import IdempotencyKeyHeader

router = admin_router(tags=["Discount codes"])

KEYS = (
    " A platform operator key acts on any company (named by `companyId`); a company key on its "
    "own only (another `companyId`, or another company's card, is 404)."
)


@router.post(
    "/api/v2/admin/discount-codes",
    response_model=DiscountCodeResponse,
    status_code=201,
    summary="Define a discount code",
    description="A percentage off the top-up fee of the cards carrying the code, within "
    "`ValidFrom`/`ValidUntil` when given. A name already used: 409 `DISCOUNT_CODE_EXISTS`." + KEYS,
    responses=error_responses(400, 404, 409),
)
async def create_discount_code(
    body: DiscountCodeCreate,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> DiscountCodeResponse:
    company_id = await target_company(session, caller, companyId)
    await claim_admin_request(request, session, caller, company_id=company_id, key=idempotency_key)
    row = await service.create_code(
        session,
        company_id=company_id,
        code=body.Code,
        percent_off=body.PercentOff,
        valid_from=body.ValidFrom,
        valid_until=body.ValidUntil,
    )
    return DiscountCodeResponse.of(row)


@router.get(
    "/api/v2/admin/discount-codes",
    response_model=list[DiscountCodeResponse],
    summary="List the company's discount codes",
    description=KEYS.strip(),
    responses=error_responses(400, 404),
)
async def list_discount_codes(
    session: DbSession, caller: CurrentAdmin, companyId: CompanyIdQuery = None
) -> list[DiscountCodeResponse]:
    company_id = await target_company(session, caller, companyId)
    return [
        DiscountCodeResponse.of(r) for r in await service.list_codes(session, company_id=company_id)
    ]


@router.put(
    "/api/v2/admin/discount-codes/cards/{cardId:id}/discount",
    response_model=CardDiscountResponse,
    summary="Set or clear a card's discount code",
    description="`DiscountCode` null or absent clears it; a code the company has not defined: "
    "404 `DISCOUNT_CODE_NOT_FOUND`. Records `card.discount_code.updated`." + KEYS,
    responses=error_responses(400, 404),
)
async def put_card_discount(
    cardId: CardIdPath,
    body: DiscountCodeUpdate,
    session: DbSession,
    caller: CurrentAdmin,
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CardDiscountResponse:
    company_id = await target_company(session, caller, companyId)
    await service.set_card_code(
        session, company_id=company_id, card_id=cardId, code=body.DiscountCode
    )
    return CardDiscountResponse(CardId=cardId, DiscountCode=body.DiscountCode)
