"""The session guard scopes even a query written without a company filter."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import service as companies
from finplat.db.tenancy import bind_company
from finplat.tiers.models import Tier


async def test_unfiltered_select_sees_only_the_bound_company(session: AsyncSession) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    bind_company(session, a.company.id)
    rows = (await session.execute(select(Tier))).scalars().all()
    assert rows
    assert {t.company_id for t in rows} == {a.company.id}
    assert b.company.id not in {t.company_id for t in rows}


async def test_unfiltered_update_touches_only_the_bound_company(session: AsyncSession) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    bind_company(session, a.company.id)
    await session.execute(update(Tier).values(description="changed by A"))
    session.info.clear()
    session.expunge_all()
    tiers_b = (await session.execute(select(Tier).where(Tier.company_id == b.company.id))).scalars()
    assert all(t.description != "changed by A" for t in tiers_b)


async def test_lookup_by_primary_key_of_another_company_finds_nothing(
    session: AsyncSession,
) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    tier_of_b = (
        await session.execute(select(Tier.id).where(Tier.company_id == b.company.id).limit(1))
    ).scalar_one()
    session.expunge_all()
    bind_company(session, a.company.id)
    assert (
        await session.execute(select(Tier).where(Tier.id == tier_of_b))
    ).scalar_one_or_none() is None
