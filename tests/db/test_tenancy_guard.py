"""The session guard scopes even a query written without a company filter."""

from __future__ import annotations

import pytest
from sqlalchemy import Executable, event, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session, aliased

from finplat.companies import service as companies
from finplat.db.tenancy import UnscopedWrite, bind_company
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
    tier_of_b = await _a_tier_of(session, b.company.id)
    session.expunge_all()
    bind_company(session, a.company.id)
    assert (
        await session.execute(select(Tier).where(Tier.id == tier_of_b))
    ).scalar_one_or_none() is None


async def test_the_guard_follows_the_company_bound_last(session: AsyncSession) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    for company_id in (a.company.id, b.company.id, a.company.id):
        bind_company(session, company_id)
        seen = (await session.execute(select(Tier.company_id).distinct())).scalars().all()
        assert seen == [company_id]


async def test_a_statement_built_once_keeps_one_guarded_copy_whatever_company_is_bound(
    session: AsyncSession,
) -> None:
    # The company travels as a parameter, so one guarded copy (keyed for the compiled cache
    # once) serves every company.
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    built_once = select(Tier.company_id).distinct()
    executed: list[Executable] = []

    def seen(state: ORMExecuteState) -> None:
        executed.append(state.statement)

    event.listen(Session, "do_orm_execute", seen)
    try:
        for company_id in (a.company.id, b.company.id, a.company.id):
            bind_company(session, company_id)
            rows = (await session.execute(built_once)).scalars().all()
            assert rows == [company_id]
    finally:
        event.remove(Session, "do_orm_execute", seen)
    assert executed[0] is not built_once
    assert all(statement is executed[0] for statement in executed)


async def test_an_aliased_entity_is_scoped_too(session: AsyncSession) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    await companies.create_company(session, name="B", sandbox=True)
    bind_company(session, a.company.id)
    other = aliased(Tier)
    rows = (await session.execute(select(other.company_id).distinct())).scalars().all()
    assert rows == [a.company.id]


async def test_an_update_of_many_rows_by_key_is_refused_while_a_company_is_bound(
    session: AsyncSession,
) -> None:
    a = await companies.create_company(session, name="A", sandbox=True)
    b = await companies.create_company(session, name="B", sandbox=True)
    tier_of_b = await _a_tier_of(session, b.company.id)
    bind_company(session, a.company.id)
    with pytest.raises(UnscopedWrite):
        await session.execute(update(Tier), [{"id": tier_of_b, "description": "many"}])
    session.info.clear()
    changed = (await session.execute(select(Tier.id).where(Tier.description == "many"))).scalars()
    assert list(changed) == []


async def _a_tier_of(session: AsyncSession, company_id: int) -> int:
    found = await session.execute(select(Tier.id).where(Tier.company_id == company_id).limit(1))
    return int(found.scalar_one())
