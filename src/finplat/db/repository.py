"""The one place tenant scoping is written for reads and writes of company-owned rows."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.base import CompanyOwned

ModelT = TypeVar("ModelT", bound=CompanyOwned)


class CompanyRepository(Generic[ModelT]):
    """Repository for one company-owned model, bound to one company.

    Every statement starts from `scoped()`, which already filters by the company; `add` stamps
    the company on new rows. Subclasses add domain queries on top of `scoped()`.
    """

    model: ClassVar[type[Any]]

    def __init__(self, session: AsyncSession, company_id: int) -> None:
        self.session = session
        self.company_id = company_id

    def scoped(self) -> Select[ModelT]:
        return select(self.model).where(self.model.company_id == self.company_id)

    async def get(self, object_id: int) -> ModelT | None:
        stmt = self.scoped().where(self.model.id == object_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def add(self, obj: ModelT) -> ModelT:
        obj.company_id = self.company_id
        self.session.add(obj)
        await self.session.flush()
        return obj
