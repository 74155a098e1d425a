"""SQL for companies (system scope: used by the CLI and at authentication)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company


async def get(session: AsyncSession, company_id: int, *, lock: bool = False) -> Company | None:
    if lock:
        return await session.get(Company, company_id, with_for_update=True, populate_existing=True)
    return await session.get(Company, company_id)


async def add(session: AsyncSession, company: Company) -> Company:
    session.add(company)
    await session.flush()
    return company
