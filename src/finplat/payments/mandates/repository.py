from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.payments.mandates.models import MandateStatusV2, PaymentMandate


class MandateRepository(CompanyRepository[PaymentMandate]):
    model = PaymentMandate

    async def find(
        self, mandate_id: str, *, lock: bool = False, fresh: bool = False
    ) -> PaymentMandate | None:
        """The mandate; a locked or `fresh` read refreshes the object the session may hold."""
        stmt = self.scoped().where(PaymentMandate.id == mandate_id)
        if lock:
            stmt = for_update(stmt)
        if lock or fresh:
            stmt = stmt.execution_options(populate_existing=True)
        found: PaymentMandate | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_provider_mandate(
        self, provider: str, provider_mandate_id: str, *, lock: bool = False
    ) -> PaymentMandate | None:
        stmt = self.scoped().where(
            PaymentMandate.provider == provider,
            PaymentMandate.provider_mandate_id == provider_mandate_id,
        )
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        found: PaymentMandate | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def page(
        self, request: PageRequest, *, user_id: int | None, status: MandateStatusV2 | None
    ) -> PageSlice[PaymentMandate]:
        stmt = self.scoped()
        if user_id is not None:
            stmt = stmt.where(PaymentMandate.user_id == user_id)
        if status is not None:
            stmt = stmt.where(PaymentMandate.status == status.value)
        stmt = stmt.order_by(PaymentMandate.created_at.desc(), PaymentMandate.id.desc())
        return await fetch_page(self.session, stmt, request)


async def companies_with_pending(session: AsyncSession) -> list[int]:
    """Companies with a mandate waiting for authorisation (system scope: reconciliation)."""
    stmt = (
        select(PaymentMandate.company_id)
        .where(PaymentMandate.status == MandateStatusV2.PENDING.value)
        .distinct()
    )
    return [company_id for (company_id,) in await session.execute(stmt)]


async def pending_ids(session: AsyncSession, *, company_id: int) -> list[str]:
    stmt = select(PaymentMandate.id).where(
        PaymentMandate.company_id == company_id,
        PaymentMandate.status == MandateStatusV2.PENDING.value,
    )
    return [mandate_id for (mandate_id,) in await session.execute(stmt)]
