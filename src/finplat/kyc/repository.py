from __future__ import annotations

from finplat.db.repository import CompanyRepository
from finplat.kyc.models import KycSubmission


class KycSubmissionRepository(CompanyRepository[KycSubmission]):
    model = KycSubmission

    async def for_user(self, user_id: int) -> KycSubmission | None:
        stmt = self.scoped().where(KycSubmission.user_id == user_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_applicant(self, applicant_id: str) -> KycSubmission | None:
        stmt = self.scoped().where(KycSubmission.applicant_id == applicant_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()
