"""A provider is never called inside an open transaction: the sandbox checks it, for requests
and background jobs alike, whether a unit of work opened the session or code opened it straight
from the session factory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import open_sessions
from finplat.db.unit_of_work import unit_of_work
from finplat.providers.sandbox.simulator import Simulator, TransactionHeldAcrossProviderCall
from tests.conftest import Tenant

Opening = Callable[[async_sessionmaker[AsyncSession]], AbstractAsyncContextManager[AsyncSession]]


@pytest.fixture(params=["unit of work", "factory"])
def opening(request: pytest.FixtureRequest) -> Opening:
    """How the session is opened: by a unit of work, or straight from the session factory."""
    if request.param == "unit of work":
        return unit_of_work
    return lambda factory: factory()


async def test_a_sandbox_call_inside_an_open_transaction_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant, opening: Opening
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with opening(session_factory) as session:
        await session.execute(select(1))
        with pytest.raises(TransactionHeldAcrossProviderCall):
            await simulator.enter(tenant.company_id, "execute_trade")


async def test_a_sandbox_call_in_a_task_started_inside_an_open_transaction_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant, opening: Opening
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with opening(session_factory) as session:
        await session.execute(select(1))
        with pytest.raises(TransactionHeldAcrossProviderCall):
            await asyncio.gather(simulator.enter(tenant.company_id, "execute_trade"))


async def test_a_sandbox_call_after_the_commit_goes_ahead_until_the_next_transaction(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant, opening: Opening
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with opening(session_factory) as session:
        await session.execute(select(1))
        await session.commit()
        assert await simulator.enter(tenant.company_id, "execute_trade") is None
        await session.execute(select(1))
        with pytest.raises(TransactionHeldAcrossProviderCall):
            await simulator.enter(tenant.company_id, "execute_trade")


async def test_a_sandbox_call_after_the_session_closed_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant, opening: Opening
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with opening(session_factory) as session:
        await session.execute(select(1))
    assert await simulator.enter(tenant.company_id, "execute_trade") is None


async def test_a_transaction_open_in_another_task_does_not_refuse_this_ones_call(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant, opening: Opening
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    began, done = asyncio.Event(), asyncio.Event()

    async def hold_a_transaction() -> None:
        async with opening(session_factory) as session:
            await session.execute(select(1))
            began.set()
            await done.wait()

    holder = asyncio.create_task(hold_a_transaction())
    await began.wait()
    try:
        assert await simulator.enter(tenant.company_id, "execute_trade") is None
    finally:
        done.set()
        await holder


async def test_a_sandbox_call_outside_any_session_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    assert await simulator.enter(tenant.company_id, "execute_trade") is None


async def test_a_task_keeps_the_marks_of_its_open_transactions_only(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    for _ in range(3):
        async with session_factory() as session:
            await session.execute(select(1))
    async with session_factory() as session:
        await session.execute(select(1))
        assert open_sessions._open.get() == (session.sync_session,)
