from __future__ import annotations

from datetime import datetime

from finplat.crypto.edd.models import CryptoEdd
from finplat.db.dialect import upsert
from finplat.db.repository import CompanyRepository


class EddRepository(CompanyRepository[CryptoEdd]):
    model = CryptoEdd

    async def of_user(self, user_id: int) -> CryptoEdd | None:
        stmt = (
            self.scoped()
            .where(CryptoEdd.user_id == user_id)
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def record(
        self, *, user_id: int, status: str, applicant_id: str, now: datetime
    ) -> CryptoEdd:
        """One row per user: a new submission replaces the record of the last one."""
        await self.session.execute(
            upsert(
                self.session,
                CryptoEdd,
                keys=["company_id", "user_id"],
                values={
                    "company_id": self.company_id,
                    "user_id": user_id,
                    "status": status,
                    "applicant_id": applicant_id,
                    "submitted_at": now,
                    "created_at": now,
                    "updated_at": now,
                },
            )
        )
        found = await self.of_user(user_id)
        assert found is not None
        return found
