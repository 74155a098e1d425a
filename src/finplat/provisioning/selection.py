"""Which providers a user is onboarded with: those of the user's tier (its card products, and
the banking provider when the tier includes its cards or IBAN) and the company's default card
provider."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import repository as companies
from finplat.providers.names import BankProvider
from finplat.tiers import service as tiers
from finplat.users.models import User

ORDER = (BankProvider.CARDPROV, BankProvider.SWITCHPROV, BankProvider.BANKPROV)


async def selected_providers(session: AsyncSession, user: User) -> list[BankProvider]:
    chosen: set[BankProvider] = set()
    company = await companies.get(session, user.company_id)
    if company is not None:
        chosen.add(BankProvider(company.default_card_provider))
    if user.tier_id is not None:
        tier = await tiers.get_tier(session, company_id=user.company_id, tier_id=user.tier_id)
        products = await tiers.card_products(
            session, company_id=user.company_id, tier_id=user.tier_id
        )
        chosen |= {BankProvider(p.provider) for p in products}
        if tier.includes_bankprov_cards or tier.includes_bankprov_iban:
            chosen.add(BankProvider.BANKPROV)
    return [p for p in ORDER if p in chosen]


async def default_card_provider(session: AsyncSession, company_id: int) -> BankProvider:
    company = await companies.get(session, company_id)
    return BankProvider(company.default_card_provider if company else BankProvider.CARDPROV)
