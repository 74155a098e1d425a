from __future__ import annotations

from fastapi import status

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.schemas import TierIdPath
from finplat.tiers import service
from finplat.tiers.schemas import CardProductResponse, CardTierResponse, TierList, TierResponse

router = api_router(tags=["Tiers"])


@router.get(
    "/api/v2/tiers",
    response_model=TierList,
    status_code=status.HTTP_200_OK,
    summary="List the company's tiers",
    description="Every tier of the key's company. Also a cheap way to verify credentials.",
    responses=error_responses(),
)
async def list_tiers(session: DbSession, principal: CurrentPrincipal) -> TierList:
    tiers = await service.list_tiers(session, company_id=principal.company_id)
    return TierList(Tiers=[TierResponse.of(t) for t in tiers])


@router.get(
    "/api/v2/tiers/card-tier/{tierId}",
    response_model=CardTierResponse,
    summary="Card products of a tier",
    responses=error_responses(400, 404),
)
async def card_tier(
    tierId: TierIdPath, session: DbSession, principal: CurrentPrincipal
) -> CardTierResponse:
    products = await service.card_products(session, company_id=principal.company_id, tier_id=tierId)
    return CardTierResponse(
        TierId=tierId, CardProducts=[CardProductResponse.of(p) for p in products]
    )
