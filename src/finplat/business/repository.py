from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select

from finplat.business.models import AssociatedPerson, BusinessApplication, BusinessDocument
from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository


class ApplicationRepository(CompanyRepository[BusinessApplication]):
    model = BusinessApplication

    async def for_user(self, user_id: int, *, lock: bool = False) -> BusinessApplication | None:
        stmt = self.scoped().where(BusinessApplication.user_id == user_id)
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_id(
        self, provider_application_id: str, *, lock: bool = False
    ) -> BusinessApplication | None:
        stmt = self.scoped().where(
            BusinessApplication.provider_application_id == provider_application_id
        )
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()


class PersonRepository(CompanyRepository[AssociatedPerson]):
    model = AssociatedPerson

    async def on_application(self, application_id: int, person_id: int) -> AssociatedPerson | None:
        stmt = self.scoped().where(
            AssociatedPerson.application_id == application_id, AssociatedPerson.id == person_id
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_ids(self, provider_person_ids: Sequence[str]) -> list[AssociatedPerson]:
        stmt = self.scoped().where(AssociatedPerson.provider_person_id.in_(provider_person_ids))
        return list((await self.session.execute(stmt)).scalars())

    async def by_email(self, application_id: int, email: str) -> AssociatedPerson | None:
        stmt = self.scoped().where(
            AssociatedPerson.application_id == application_id, AssociatedPerson.email == email
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_id(self, provider_person_id: str) -> AssociatedPerson | None:
        stmt = self.scoped().where(AssociatedPerson.provider_person_id == provider_person_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def has_any(self, application_id: int) -> bool:
        stmt = self.scoped().where(AssociatedPerson.application_id == application_id).limit(1)
        return (await self.session.execute(stmt)).first() is not None

    async def all_on(self, application_id: int) -> Sequence[AssociatedPerson]:
        return (await self.session.execute(self.listing(application_id))).scalars().all()

    def listing(self, application_id: int) -> Select[AssociatedPerson]:
        return (
            self.scoped()
            .where(AssociatedPerson.application_id == application_id)
            .order_by(AssociatedPerson.id)
        )


class DocumentRepository(CompanyRepository[BusinessDocument]):
    model = BusinessDocument

    async def by_upload_key(self, upload_key: str) -> BusinessDocument | None:
        stmt = self.scoped().where(BusinessDocument.upload_key == upload_key)
        return (await self.session.execute(stmt)).scalar_one_or_none()
