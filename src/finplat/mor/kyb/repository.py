from __future__ import annotations

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.mor.kyb.models import MorKyb


class MorKybRepository(CompanyRepository[MorKyb]):
    model = MorKyb

    async def current(self, *, lock: bool = False) -> MorKyb | None:
        stmt = self.scoped()
        if lock:
            stmt = for_update(stmt)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_id(self, provider_application_id: str) -> MorKyb | None:
        stmt = self.scoped().where(MorKyb.provider_application_id == provider_application_id)
        kyb: MorKyb | None = (await self.session.execute(for_update(stmt))).scalar_one_or_none()
        return kyb
