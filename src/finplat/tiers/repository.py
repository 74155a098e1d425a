from __future__ import annotations

from sqlalchemy import bindparam

from finplat.db.repository import CompanyRepository, of_company
from finplat.tiers.models import CardProduct, Tier


class TierRepository(CompanyRepository[Tier]):
    model = Tier

    async def list_all(self) -> list[Tier]:
        stmt = self.scoped().order_by(Tier.account_type.desc(), Tier.tier_level, Tier.id)
        return list((await self.session.execute(stmt)).scalars())

    async def default_for(self, account_type: str) -> Tier | None:
        found = await self.session.execute(_DEFAULT_FOR, self.bound(account_type=account_type))
        return found.scalar_one_or_none()


class CardProductRepository(CompanyRepository[CardProduct]):
    model = CardProduct

    async def for_tier(self, tier_id: int) -> list[CardProduct]:
        stmt = self.scoped().where(CardProduct.tier_id == tier_id).order_by(CardProduct.id)
        return list((await self.session.execute(stmt)).scalars())


# Every user's creation reads it: built once.
_DEFAULT_FOR = (
    of_company(
        Tier,
        Tier.account_type == bindparam("account_type"),
        Tier.is_default.is_(True),
        Tier.is_active.is_(True),
    )
    .order_by(Tier.tier_level, Tier.id)
    .limit(1)
)
