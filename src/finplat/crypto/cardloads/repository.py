from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.cardloads.models import CardLoadStatus, CryptoCardLoad
from finplat.db.repository import CompanyRepository


class CardLoadRepository(CompanyRepository[CryptoCardLoad]):
    model = CryptoCardLoad

    async def find(self, load_id: str, *, lock: bool = False) -> CryptoCardLoad | None:
        stmt = self.scoped().where(CryptoCardLoad.id == load_id)
        if lock:
            stmt = stmt.with_for_update()
        stmt = stmt.execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_key(self, key: str, *, lock: bool = False) -> CryptoCardLoad | None:
        stmt = self.scoped().where(CryptoCardLoad.provider_key == key)
        if lock:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def pending_ids(self) -> list[str]:
        stmt = (
            select(CryptoCardLoad.id)
            .where(
                CryptoCardLoad.company_id == self.company_id,
                CryptoCardLoad.status == CardLoadStatus.PENDING.value,
            )
            .order_by(CryptoCardLoad.created_at)
        )
        return list((await self.session.execute(stmt)).scalars())


async def companies_with_pending(session: AsyncSession) -> list[int]:
    """Every company with a pending crypto card load (the reconciliation's system scope)."""
    stmt = (
        select(CryptoCardLoad.company_id)
        .where(CryptoCardLoad.status == CardLoadStatus.PENDING.value)
        .distinct()
    )
    return list((await session.execute(stmt)).scalars())


async def confirmed_loads(
    session: AsyncSession, *, company_id: int | None, limit: int
) -> list[tuple[int, str]]:
    """(company, load) of the loads whose card credit is due, oldest first."""
    stmt = select(CryptoCardLoad.company_id, CryptoCardLoad.id).where(
        CryptoCardLoad.status == CardLoadStatus.CONFIRMED.value
    )
    if company_id is not None:
        stmt = stmt.where(CryptoCardLoad.company_id == company_id)
    stmt = stmt.order_by(CryptoCardLoad.confirmed_at).limit(limit)
    return [(row[0], row[1]) for row in await session.execute(stmt)]
