"""SQL for voucher settings. The platform's row and the company list are system scope (the
operator's views); a company's own row is read through its company-scoped repository."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company
from finplat.db.dialect import for_update, insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository
from finplat.kit.clock import utcnow
from finplat.vouchers.settings.models import VoucherCompanySettings, VoucherGlobalSettings

GLOBAL_ID = 1


async def global_row(session: AsyncSession, *, lock: bool = False) -> VoucherGlobalSettings | None:
    stmt = select(VoucherGlobalSettings).where(VoucherGlobalSettings.id == GLOBAL_ID)
    if lock:
        stmt = for_update(stmt).execution_options(populate_existing=True)
    found: VoucherGlobalSettings | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def locked_global_row(session: AsyncSession) -> VoucherGlobalSettings:
    """The platform's row, created on first change (safe under parallel first changes)."""
    await session.execute(
        insert_ignoring_conflicts(session, VoucherGlobalSettings).values(
            id=GLOBAL_ID, created_at=utcnow(), updated_at=utcnow()
        )
    )
    row = await global_row(session, lock=True)
    assert row is not None
    return row


async def companies_with_settings(
    session: AsyncSession, *, company_id: int | None = None
) -> list[tuple[Company, VoucherCompanySettings | None]]:
    """Every company (or one) with its own settings row, if any, by company id."""
    stmt = (
        select(Company, VoucherCompanySettings)
        .outerjoin(VoucherCompanySettings, VoucherCompanySettings.company_id == Company.id)
        .order_by(Company.id)
    )
    if company_id is not None:
        stmt = stmt.where(Company.id == company_id)
    return [(c, s) for c, s in (await session.execute(stmt)).all()]


class CompanySettingsRepository(CompanyRepository[VoucherCompanySettings]):
    model = VoucherCompanySettings

    async def locked_own(self) -> VoucherCompanySettings:
        """The company's row, created on first change (safe under parallel first changes)."""
        await self.session.execute(
            insert_ignoring_conflicts(self.session, VoucherCompanySettings).values(
                company_id=self.company_id, created_at=utcnow(), updated_at=utcnow()
            )
        )
        row = await self.own(lock=True)
        assert row is not None
        return row

    async def own(self, *, lock: bool = False) -> VoucherCompanySettings | None:
        stmt = self.scoped()
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        found: VoucherCompanySettings | None = (
            await self.session.execute(stmt)
        ).scalar_one_or_none()
        return found
