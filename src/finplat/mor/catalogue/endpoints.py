"""Tier discovery and card products for the MOR merchant: the company's own catalogue, the same
one its other routes order from, behind the MOR gate."""

from __future__ import annotations

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.kit.schemas import TierIdPath
from finplat.mor.access import PREFIX, mor_router
from finplat.tiers import service
from finplat.tiers.schemas import CardProductResponse, CardTierResponse, TierList, TierResponse

router = mor_router(tags=["MOR"])


@router.get(
    f"{PREFIX}/tiers",
    response_model=TierList,
    summary="Discover the MOR merchant's tiers",
    description="Every tier of the merchant's company, as `GET /api/v2/tiers`.",
    responses=error_responses(),
)
async def mor_tiers(session: DbSession, principal: CurrentPrincipal) -> TierList:
    tiers = await service.list_tiers(session, company_id=principal.company_id)
    return TierList(Tiers=[TierResponse.of(t) for t in tiers])


@router.get(
    f"{PREFIX}/tiers/{{tierId}}/card-products",
    response_model=CardTierResponse,
    summary="Card products the MOR merchant can order in a tier",
    description="`CardTypeId` is what a MOR card order names.",
    responses=error_responses(400, 404),
)
async def mor_card_products(
    tierId: TierIdPath, session: DbSession, principal: CurrentPrincipal
) -> CardTierResponse:
    products = await service.card_products(session, company_id=principal.company_id, tier_id=tierId)
    return CardTierResponse(
        TierId=tierId, CardProducts=[CardProductResponse.of(p) for p in products]
    )
