"""All SQL of child companies and their fundings. Companies and fundings are not
`CompanyOwned` (a child is a tenant of its own; a funding belongs to two), so every query
names the company it reads for itself."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company
from finplat.mor.children.models import MorChildFunding


async def child_of(session: AsyncSession, *, parent_id: int, child_id: int) -> Company | None:
    stmt = select(Company).where(Company.id == child_id, Company.parent_company_id == parent_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def children_of(
    session: AsyncSession, *, parent_id: int, offset: int, limit: int
) -> list[Company]:
    """Newest first."""
    stmt = (
        select(Company)
        .where(Company.parent_company_id == parent_id)
        .order_by(Company.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list((await session.execute(stmt)).scalars())


async def add_funding(session: AsyncSession, funding: MorChildFunding) -> MorChildFunding:
    session.add(funding)
    await session.flush()
    return funding


async def fundings_of(
    session: AsyncSession, *, parent_id: int, child_id: int, offset: int, limit: int
) -> list[MorChildFunding]:
    """The parent's fundings of one child, newest first."""
    stmt = (
        select(MorChildFunding)
        .where(
            MorChildFunding.parent_company_id == parent_id,
            MorChildFunding.child_company_id == child_id,
        )
        .order_by(MorChildFunding.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list((await session.execute(stmt)).scalars())
