"""A company repository's reads: by id, the session's copy or the database's row when asked;
built once, the company the repository binds. Its writes of a loaded row: the changed columns
only, in the company's row alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import bindparam, event, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from finplat.db.repository import of_company
from finplat.kit.clock import reset_clock, set_clock, utcnow
from finplat.users.models import User
from finplat.users.repository import UserRepository
from tests.conftest import TenantFactory
from tests.factories import user_payload
from tests.isolated import isolated


async def test_a_fresh_read_by_id_sees_what_another_transaction_committed() -> None:
    async with isolated("fresh-read") as env:
        created = await env.client.post("/api/v2/users", json=user_payload(FirstName="Ada"))
        assert created.status_code == 201, created.text
        user_id = created.json()["Id"]
        factory = env.app.state.session_factory
        async with factory() as session:
            users = UserRepository(session, env.company_id)
            held = await users.get(user_id)
            assert held is not None
            assert held.first_name == "Ada"
            await session.commit()  # the copy stays loaded (SQLite's one connection is free)
            async with factory() as other, other.begin():
                await other.execute(
                    update(User).where(User.id == user_id).values(first_name="Grace")
                )
            # An ordinary read keeps the copy the session holds; a fresh one replaces it.
            assert (await users.get(user_id)) is held
            assert held.first_name == "Ada"
            assert (await users.get(user_id, fresh=True)) is held
            assert held.first_name == "Grace"


async def test_a_statement_built_once_reads_the_company_its_repository_binds(
    make_tenant: TenantFactory, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    # No company is bound to the session: the statement's own criterion does the scoping.
    first, second = await make_tenant("First Ltd"), await make_tenant("Second Ltd")
    for tenant in (first, second):
        created = await tenant.client.post(
            "/api/v2/users", json=user_payload(Email="same@example.com")
        )
        assert created.status_code == 201, created.text
    by_email = of_company(User, User.email == bindparam("email"))
    async with session_factory() as session:
        for tenant in (first, second):
            users = UserRepository(session, tenant.company_id)
            found = (await session.execute(by_email, users.bound(email="same@example.com"))).all()
            assert [row[0].company_id for row in found] == [tenant.company_id]


async def test_saving_a_loaded_row_writes_its_changes_without_the_orms_flush(
    make_tenant: TenantFactory, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    tenant = await make_tenant("Saving Ltd")
    created = await tenant.client.post("/api/v2/users", json=user_payload(FirstName="Ada"))
    assert created.status_code == 201, created.text
    flushes: list[object] = []

    def flushing(*_: object) -> None:
        flushes.append(None)

    later = utcnow() + timedelta(minutes=5)
    async with session_factory() as session:
        users = UserRepository(session, tenant.company_id)
        held = await users.get(created.json()["Id"])
        assert held is not None
        first_written = held.updated_at
        held.first_name = "Grace"
        event.listen(Session, "before_flush", flushing)
        set_clock(lambda: later)
        try:
            await users.save(held)
            await session.commit()
        finally:
            reset_clock()
            event.remove(Session, "before_flush", flushing)
        assert flushes == []
        assert held.updated_at == later
    async with session_factory() as session:
        found = await UserRepository(session, tenant.company_id).get(created.json()["Id"])
        assert found is not None
        assert (found.first_name, found.last_name) == ("Grace", held.last_name)
        assert found.updated_at > first_written


async def test_saving_a_row_through_another_companys_repository_writes_nothing(
    make_tenant: TenantFactory, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    mine, theirs = await make_tenant("Mine Ltd"), await make_tenant("Theirs Ltd")
    created = await mine.client.post("/api/v2/users", json=user_payload(FirstName="Ada"))
    assert created.status_code == 201, created.text
    async with session_factory() as session:
        held = await UserRepository(session, mine.company_id).get(created.json()["Id"])
        assert held is not None
        held.first_name = "Mallory"
        with pytest.raises(StaleDataError):
            await UserRepository(session, theirs.company_id).save(held)
        await session.rollback()
    async with session_factory() as session:
        found = await UserRepository(session, mine.company_id).get(created.json()["Id"])
        assert found is not None
        assert found.first_name == "Ada"
