"""Tiers and their card products."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import NotFound
from finplat.kit.money import to_minor
from finplat.tiers.catalogue import DEFAULT_TIERS
from finplat.tiers.models import CardProduct, Tier
from finplat.tiers.repository import CardProductRepository, TierRepository

TIER_FEE_CURRENCY = "USD"


class TierNotFound(NotFound):
    code = "TIER_NOT_FOUND"
    message = "No tier with that id."


async def create_default_tiers(session: AsyncSession, *, company_id: int) -> list[Tier]:
    """Give a new company the default catalogue (see `finplat.tiers.catalogue`)."""
    tiers_repo = TierRepository(session, company_id)
    products_repo = CardProductRepository(session, company_id)
    created = []
    for spec in DEFAULT_TIERS:
        tier = await tiers_repo.add(
            Tier(
                name=spec.name,
                description=spec.description,
                tier_level=spec.tier_level,
                account_type=spec.account_type,
                fee_currency=TIER_FEE_CURRENCY,
                monthly_fee_minor=to_minor(spec.monthly_fee, TIER_FEE_CURRENCY),
                yearly_fee_minor=to_minor(spec.yearly_fee, TIER_FEE_CURRENCY),
                features=list(spec.features),
                is_default=spec.is_default,
                is_active=True,
                includes_bankprov_cards=spec.includes_bankprov_cards,
                includes_bankprov_iban=spec.includes_bankprov_iban,
            )
        )
        for product in spec.products:
            await products_repo.add(
                CardProduct(
                    tier_id=tier.id,
                    name=product.name,
                    card_type=product.card_type,
                    provider=product.provider.value,
                    currency=product.currency,
                )
            )
        created.append(tier)
    return created


async def list_tiers(session: AsyncSession, *, company_id: int) -> list[Tier]:
    return await TierRepository(session, company_id).list_all()


async def get_tier(session: AsyncSession, *, company_id: int, tier_id: int) -> Tier:
    tier = await TierRepository(session, company_id).get(tier_id)
    if tier is None:
        raise TierNotFound()
    return tier


async def default_tier(session: AsyncSession, *, company_id: int, account_type: str) -> Tier | None:
    return await TierRepository(session, company_id).default_for(account_type)


async def card_products(
    session: AsyncSession, *, company_id: int, tier_id: int
) -> list[CardProduct]:
    """The card products a tier offers; an unknown tier (or another company's) is 404."""
    await get_tier(session, company_id=company_id, tier_id=tier_id)
    return await CardProductRepository(session, company_id).for_tier(tier_id)
