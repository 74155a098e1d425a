from __future__ import annotations

from finplat.bankprov_onboarding.models import BankprovApplication, BankprovDocument
from finplat.db.repository import CompanyRepository


class ApplicationRepository(CompanyRepository[BankprovApplication]):
    model = BankprovApplication

    async def for_user(self, user_id: int) -> BankprovApplication | None:
        stmt = self.scoped().where(BankprovApplication.user_id == user_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()


class DocumentRepository(CompanyRepository[BankprovDocument]):
    model = BankprovDocument

    async def by_fingerprint(
        self, application_id: int, fingerprint: str
    ) -> BankprovDocument | None:
        stmt = self.scoped().where(
            BankprovDocument.application_id == application_id,
            BankprovDocument.fingerprint == fingerprint,
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()
