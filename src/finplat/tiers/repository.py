from __future__ import annotations

from sqlalchemy import Select

from finplat.db.repository import CompanyRepository
from finplat.tiers.models import CardProduct, Tier


class TierRepository(CompanyRepository[Tier]):
    model = Tier

    async def list_all(self) -> list[Tier]:
        stmt = self.scoped().order_by(Tier.account_type.desc(), Tier.tier_level, Tier.id)
        return list((await self.session.execute(stmt)).scalars())

    async def default_for(self, account_type: str) -> Tier | None:
        stmt: Select[Tier] = (
            self.scoped()
            .where(Tier.account_type == account_type, Tier.is_default, Tier.is_active)
            .order_by(Tier.tier_level, Tier.id)
            .limit(1)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()


class CardProductRepository(CompanyRepository[CardProduct]):
    model = CardProduct

    async def for_tier(self, tier_id: int) -> list[CardProduct]:
        stmt = self.scoped().where(CardProduct.tier_id == tier_id).order_by(CardProduct.id)
        return list((await self.session.execute(stmt)).scalars())
